#!/usr/bin/env bash
# Statistics benchmark (docs/performance.md): imports 100 000 and 1 000 000 generated sessions
# through `diligencectl import` into a temporary daemon, then measures `stats year`, `stats all`,
# `stats week`, `history` (every session) and `status` (the reference: one client start-up plus
# one round trip) with hyperfine; and the year's report page (`report year --html`) against
# `stats year --json` (its numbers alone).
# Prints rows `figure | ours | reference | ratio | target | met` (the format `make bench` adds to
# its table; a figure whose command the build lacks: a JSON row, its note saying why) and writes
# bench/results/stats.json. SIZES="100000" (or QUICK=1, as `make bench QUICK=1` passes it)
# measures only the smaller database. BIN_DIR: release binaries to use.
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
json_rows=()
ms() { python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['results'][0]['mean']*1000, 2))" "$1"; }
# A command the build lacks (an older build under `make bench-compare`) makes its figure n/a,
# not the run: timed NAME WARMUP RUNS COMMAND... prints the mean in ms, or n/a and keeps the
# command's first words in $dir/NAME.why for the row's note.
timed() {
    local name=$1 warmup=$2 runs=$3; shift 3
    if hyperfine -N --warmup "$warmup" --runs "$runs" --export-json "$dir/$name.json" "$*" >/dev/null 2>&1; then
        ms "$dir/$name.json"
    else
        { "$@" 2>&1 >/dev/null || true; } | { grep . || true; } | head -1 > "$dir/$name.why" || true
        echo n/a
    fi
}
why() { for name in "$@"; do [ -s "$dir/$name.why" ] && { echo "n/a: $(cat "$dir/$name.why")"; return; }; done; echo "n/a"; }
# a ÷ b rounded to one decimal, n/a where either is.
ratio() { python3 -c "import sys; a, b = sys.argv[1:]; print('n/a' if 'n/a' in (a, b) else round(float(a) / float(b), 1))" "$1" "$2"; }
# yes/no for VALUE OP BOUND (OP: <= or <), — where VALUE is n/a.
met() { python3 -c "import sys; v, op, b = sys.argv[1:]; print('—' if v == 'n/a' else ('yes' if (float(v) <= float(b) if op == '<=' else float(v) < float(b)) else 'no'))" "$1" "$2" "$3"; }
# One row: `figure | ours | reference | ratio | target | met`, or where OURS is n/a a JSON row
# whose note says why (bench/run.py reads both).
row() {
    local figure=$1 ours=$2 reference=$3 ratio=$4 target=$5 met=$6 note=${7:-}
    if [ "${ours%% *}" = n/a ] || [ "${ratio%%×}" = n/a ]; then
        python3 -c "import json,sys; f, o, r, t, n = sys.argv[1:]; print(json.dumps({'figure': f, 'ours': None if o.startswith('n/a') else o, 'reference': r, 'ratio': None, 'target': t, 'met': None, 'note': n}, ensure_ascii=False))" \
            "$figure" "$ours" "$reference" "$target" "$note"
    else
        echo "$figure | $ours | $reference | $ratio | $target | $met"
    fi
}
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
    status_ms=$(timed status 3 30 "${ctl[@]}" status)
    year_ms=$(timed year 2 15 "${ctl[@]}" stats year)
    all_ms=$(timed all 1 5 "${ctl[@]}" stats all)
    year_json_ms=$(timed year-json 2 15 "${ctl[@]}" stats year --json)
    page_ms=$(timed page 2 15 "${ctl[@]}" report year --html)
    week_ms=$(timed week 2 15 "${ctl[@]}" stats week)
    # No filter: every session printed (issue 28's side-by-side figure; its default may be bounded later).
    history_ms=$(timed history 0 3 "${ctl[@]}" history)
    ratio_page=$(ratio "$page_ms" "$year_json_ms")
    ratio_year=$(ratio "$year_ms" "$status_ms")
    ratio_all=$(ratio "$all_ms" "$status_ms")
    label=$(python3 -c "print(f'{$n:,}'.replace(',', ' '))")
    if [ "$n" = 100000 ]; then
        row "stats year, $label sessions" "${year_ms} ms" "status ${status_ms} ms" "${ratio_year}×" "≤ 3× status" \
            "$(met "$ratio_year" '<=' 3)" "$(why year status)"
        row "import, $label sessions, every session rule checked" "${import_s} s" – – "< 2 s" "$(met "$import_s" '<' 2)"
        row "report year --html, $label sessions" "${page_ms} ms" "stats year --json ${year_json_ms} ms" "${ratio_page}×" \
            "≤ 3× stats year --json" "$(met "$ratio_page" '<=' 3)" "$(why page year-json)"
    else
        row "stats year, $label sessions" "${year_ms} ms" "status ${status_ms} ms" "${ratio_year}×" – "" "$(why year status)"
        row "import, $label sessions" "${import_s} s" – – – ""
    fi
    row "import of the same file again (all skipped), $label sessions" "${reimport_s} s" – – – ""
    row "stats all, $label sessions" "${all_ms} ms" "status ${status_ms} ms" "${ratio_all}×" – "" "$(why all status)"
    row "status, whole process, $label sessions" "${status_ms} ms" – – – "" "$(why status)"
    row "stats week, $label sessions" "${week_ms} ms" "status ${status_ms} ms" "$(ratio "$week_ms" "$status_ms")×" – "" \
        "$(why week status)"
    row "history, every session printed, $label sessions" "${history_ms} ms" – – – "" "$(why history)"
    json_rows+=("{\"sessions\": $n, \"status_ms\": ${status_ms/n\/a/null}, \"stats_year_ms\": ${year_ms/n\/a/null}, \"stats_all_ms\": ${all_ms/n\/a/null}, \"import_s\": $import_s, \"reimport_s\": $reimport_s, \"stats_year_json_ms\": ${year_json_ms/n\/a/null}, \"report_year_html_ms\": ${page_ms/n\/a/null}, \"stats_week_ms\": ${week_ms/n\/a/null}, \"history_ms\": ${history_ms/n\/a/null}}")
    kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=""
done
(IFS=,; echo "{\"benchmark\": \"stats\", \"results\": [${json_rows[*]}]}") > bench/results/stats.json
