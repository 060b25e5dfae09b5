#!/usr/bin/env bash
# Statistics benchmark (docs/performance.md): imports 100 000 and 1 000 000 generated sessions
# through `diligencectl import` into a temporary daemon, then measures `stats year`, `stats all`
# and `status` (the reference: one client start-up plus one round trip) with hyperfine; and the
# year's report page (`report year --html`) against `stats year --json` (its numbers alone).
# Prints rows `figure | ours | reference | ratio | target | met` (the format `make bench` adds to
# its table) and writes bench/results/stats.json. SIZES="100000" (or QUICK=1, as `make bench
# QUICK=1` passes it) measures only the smaller database. BIN_DIR: release binaries to use.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "bench/stats.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
if [ -n "${BIN_DIR:-}" ]; then
    bin=$BIN_DIR
else
    swift build -c release --static-swift-stdlib >/dev/null
    bin=$(swift build -c release --show-bin-path)
fi
if [ -n "${QUICK:-}" ]; then sizes=${SIZES:-"100000"}; else sizes=${SIZES:-"100000 1000000"}; fi
work=$(mktemp -d /tmp/diligence-bench-stats-XXXXXX)
daemon=""
cleanup() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p bench/results
rows=()
json_rows=()
ms() { python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['results'][0]['mean']*1000, 2))" "$1"; }
for n in $sizes; do
    dir="$work/$n"; mkdir -p "$dir"; : > "$dir/empty.conf"
    python3 bench/gen-sessions.py "$n" > "$dir/sessions.jsonl"
    "$bin/diligenced" --socket "$dir/sock" --database "$dir/db.sqlite3" --config "$dir/empty.conf" 2>"$dir/daemon.log" &
    daemon=$!
    for _ in $(seq 100); do [ -S "$dir/sock" ] && break; sleep 0.05; done
    ctl=("$bin/diligencectl" --socket "$dir/sock")
    start=$(date +%s.%N)
    "${ctl[@]}" import "$dir/sessions.jsonl" >/dev/null
    import_s=$(python3 -c "print(round($(date +%s.%N) - $start, 2))")
    # The same file again: every session checked against the rules and found recorded already.
    start=$(date +%s.%N)
    "${ctl[@]}" import "$dir/sessions.jsonl" >/dev/null
    reimport_s=$(python3 -c "print(round($(date +%s.%N) - $start, 2))")
    hyperfine -N --warmup 3 --runs 30 --export-json "$dir/status.json" "${ctl[*]} status" >/dev/null 2>&1
    hyperfine -N --warmup 2 --runs 15 --export-json "$dir/year.json" "${ctl[*]} stats year" >/dev/null 2>&1
    hyperfine -N --warmup 1 --runs 5 --export-json "$dir/all.json" "${ctl[*]} stats all" >/dev/null 2>&1
    hyperfine -N --warmup 2 --runs 15 --export-json "$dir/year-json.json" "${ctl[*]} stats year --json" >/dev/null 2>&1
    hyperfine -N --warmup 2 --runs 15 --export-json "$dir/page.json" "${ctl[*]} report year --html" >/dev/null 2>&1
    status_ms=$(ms "$dir/status.json"); year_ms=$(ms "$dir/year.json"); all_ms=$(ms "$dir/all.json")
    year_json_ms=$(ms "$dir/year-json.json"); page_ms=$(ms "$dir/page.json")
    ratio_page=$(python3 -c "print(round($page_ms / $year_json_ms, 1))")
    ratio_year=$(python3 -c "print(round($year_ms / $status_ms, 1))")
    ratio_all=$(python3 -c "print(round($all_ms / $status_ms, 1))")
    label=$(python3 -c "print(f'{$n:,}'.replace(',', ' '))")
    if [ "$n" = 100000 ]; then
        met_year=$(python3 -c "print('yes' if $ratio_year <= 3 else 'no')")
        met_import=$(python3 -c "print('yes' if $import_s < 2 else 'no')")
        rows+=("stats year, $label sessions | ${year_ms} ms | status ${status_ms} ms | ${ratio_year}× | ≤ 3× status | $met_year")
        rows+=("import, $label sessions, every session rule checked | ${import_s} s | – | – | < 2 s | $met_import")
        met_page=$(python3 -c "print('yes' if $ratio_page <= 3 else 'no')")
        rows+=("report year --html, $label sessions | ${page_ms} ms | stats year --json ${year_json_ms} ms | ${ratio_page}× | ≤ 3× stats year --json | $met_page")
    else
        rows+=("stats year, $label sessions | ${year_ms} ms | status ${status_ms} ms | ${ratio_year}× | – |")
        rows+=("import, $label sessions | ${import_s} s | – | – | – |")
    fi
    rows+=("import of the same file again (all skipped), $label sessions | ${reimport_s} s | – | – | – |")
    rows+=("stats all, $label sessions | ${all_ms} ms | status ${status_ms} ms | ${ratio_all}× | – |")
    json_rows+=("{\"sessions\": $n, \"status_ms\": $status_ms, \"stats_year_ms\": $year_ms, \"stats_all_ms\": $all_ms, \"import_s\": $import_s, \"reimport_s\": $reimport_s, \"stats_year_json_ms\": $year_json_ms, \"report_year_html_ms\": $page_ms}")
    kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=""
done
echo "# figure | ours | reference | ratio | target | met"
printf '%s\n' "${rows[@]}"
(IFS=,; echo "{\"benchmark\": \"stats\", \"results\": [${json_rows[*]}]}") > bench/results/stats.json
