# bash completion for diligencectl. Install to /usr/share/bash-completion/completions/diligencectl
# (make install does). Task names come from the running daemon: `diligencectl task list --names`;
# device names (--device) too: `diligencectl sync status --names`.
# Works with bash-completion loaded (_init_completion) and without it.

# Completes the names of the daemon's tasks (not archived ones; with --archived only those) that
# begin with the word being typed ($cur).
_diligencectl_complete_tasks() {
    _diligencectl_complete_lines diligencectl "${socket[@]}" task list --names "$@"
}

# Completes `this` and the names of the devices the daemon knows (--device).
_diligencectl_complete_devices() {
    _diligencectl_complete_lines _diligencectl_devices
}

_diligencectl_devices() {
    printf 'this\n'
    diligencectl "${socket[@]}" sync status --names
}

# Completes the lines the command "$@" prints that begin with the word being typed ($cur). Names
# are data: read line by line, compared as text and quoted for the command line the way the
# word was begun — never handed to `compgen -W`, which would expand `$(...)` in them.
_diligencectl_complete_lines() {
    local typed=$cur quote="" prefix="" name c
    case $typed in
        \'*) quote="'" typed=${typed:1} ;;
        \"*) quote='"' typed=${typed:1} ;;
    esac
    # What the word stands for so far: a backslash escapes the next character, outside quotes
    # any, inside "..." only $ ` " and \; inside '...' nothing.
    while [[ -n $typed ]]; do
        c=${typed:0:1} typed=${typed:1}
        if [[ $c == \\ && -n $typed && ( -z $quote || ( $quote == '"' && ${typed:0:1} == [\$\`\"\\] ) ) ]]; then
            c=${typed:0:1} typed=${typed:1}
        fi
        prefix+=$c
    done
    COMPREPLY=()
    while IFS= read -r name; do
        [[ $name == "$prefix"* ]] || continue
        # Readline replaces what follows an opening quote and closes the quote itself.
        case $quote in
            "'") COMPREPLY+=("${name//\'/\'\\\'\'}") ;;
            '"') name=${name//\\/\\\\} name=${name//\$/\\\$} name=${name//\`/\\\`}
                 COMPREPLY+=("${name//\"/\\\"}") ;;
            *) printf -v name '%q' "$name"; COMPREPLY+=("$name") ;;
        esac
    done < <("$@" 2>/dev/null)
}

_diligencectl() {
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    }
    local commands="start note interrupt pause resume toggle stop skip extend away back discard-away status watch task stats report week plan history export import sync timewarrior reload version doctor backup help"
    local task_commands="list show add edit archive unarchive remove"
    local plan_commands="set clear"
    local history_commands="add remove edit"
    local sync_commands="enable status disable"
    local timewarrior_commands="sync"
    local days="today tomorrow monday tuesday wednesday thursday friday saturday sunday"
    # Options that take a value: the word after one is its value, not an argument.
    local valued="--socket --format --work --short-break --long-break --long-break-every --breaks --autostart --focus-mode --color --goal --reminder --sound --description --away --dnd --mode --break-ratio --min-break --max-break --flow-nudge --overtime --void-on-interrupt --name --task --device --offset --since --until --limit --pauses --note --start --end --taskwarrior"
    local task_fields="--work --short-break --long-break --long-break-every --breaks --autostart --focus-mode --color --goal --reminder --sound --description --away --dnd --mode --break-ratio --min-break --max-break --flow-nudge --overtime --void-on-interrupt"
    local formats="--json --waybar --format"

    # Find the command after the global options, its subcommand (task, plan, history, sync: the very
    # next word, as the client reads it) and how many arguments come before the cursor.
    local i=1 command="" command_at=0 sub="" socket=() nargs=0
    while (( i < cword )); do
        case ${words[i]} in
            --socket) socket=(--socket "${words[i+1]}"); (( i += 2 )); continue ;;
            --socket=*) socket=("${words[i]}") ;;
            --*=*) ;;
            -*) [[ " $valued " == *" ${words[i]} "* ]] && (( i++ )) ;;
            *) if [[ -z $command ]]; then command=${words[i]} command_at=$i
               elif (( i == command_at + 1 )) && [[ " task plan history sync timewarrior " == *" $command "* ]] &&
                    [[ " $task_commands $plan_commands $history_commands $sync_commands $timewarrior_commands " == *" ${words[i]} "* ]]; then sub=${words[i]}
               else (( nargs++ )); fi ;;
        esac
        (( i++ ))
    done

    case $prev in
        --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --breaks|--focus-mode|--void-on-interrupt) COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
        --autostart) COMPREPLY=($(compgen -W "none breaks work all" -- "$cur")); return ;;
        --color) COMPREPLY=($(compgen -W "red orange yellow green cyan blue purple" -- "$cur")); return ;;
        --reminder) COMPREPLY=($(compgen -W "off" -- "$cur")); return ;;
        --sound) COMPREPLY=($(compgen -W "off" -- "$cur")); return ;;
        --away) COMPREPLY=($(compgen -W "pause continue abandon default" -- "$cur")); return ;;
        --dnd) COMPREPLY=($(compgen -W "on off default" -- "$cur")); return ;;
        --mode) COMPREPLY=($(compgen -W "pomodoro flow" -- "$cur")); return ;;
        --overtime) COMPREPLY=($(compgen -W "yes no" -- "$cur")); return ;;
        --flow-nudge) COMPREPLY=($(compgen -W "off" -- "$cur")); return ;;
        --break-ratio) COMPREPLY=($(compgen -W "1/5" -- "$cur")); return ;;
        --min-break|--max-break) return ;;
        --format) if [[ $command == export ]]; then COMPREPLY=($(compgen -W "csv jsonl ics" -- "$cur"))
                  else COMPREPLY=("'{icon} {task} {remaining}'"); fi; return ;;
        --task) _diligencectl_complete_tasks; return ;;
        --device) _diligencectl_complete_devices; return ;;
        --work|--short-break|--long-break|--long-break-every|--goal|--description|--name) return ;;
        --offset|--since|--until|--limit|--pauses) return ;;
    esac

    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$commands --socket --help --version" -- "$cur"))
        return
    fi
    local IFS=$'\n'
    case $command in
        start)
            [[ $cur == -* ]] && { COMPREPLY=($(compgen -W $'--note\n--taskwarrior\n--help' -- "$cur")); return; }
            _diligencectl_complete_tasks ;;
        interrupt) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--internal\n--external\n--help' -- "$cur")) ;;
        status) COMPREPLY=($(compgen -W "${formats// /$'\n'}"$'\n'--help -- "$cur")) ;;
        watch) COMPREPLY=($(compgen -W "${formats// /$'\n'}"$'\n'--no-reconnect$'\n'--bell$'\n'--help -- "$cur")) ;;
        help) COMPREPLY=($(compgen -W "${commands// /$'\n'}" -- "$cur")) ;;
        stats|report)
            local flags="--task --device --offset --plain --json --help"
            [[ $command == report ]] && flags="--task --device --offset --html --svg --help"
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "${flags// /$'\n'}" -- "$cur"))
            elif (( nargs == 0 )); then COMPREPLY=($(compgen -W $'today\nday\nweek\nmonth\nyear\nall' -- "$cur"))
            elif (( nargs == 1 )); then COMPREPLY=($(compgen -W "${days// /$'\n'}"$'\nyesterday' -- "$cur")); fi ;;
        week) COMPREPLY=($(compgen -W $'--offset\n--device\n--json\n--help'$'\n'--plain -- "$cur")) ;;
        plan)
            case $sub in
                "") COMPREPLY=($(compgen -W "${plan_commands// /$'\n'}" -- "$cur")) ;;
                *) if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W $'--offset\n--help' -- "$cur"))
                   elif (( nargs == 0 )); then COMPREPLY=($(compgen -W "${days// /$'\n'}" -- "$cur"))
                   elif [[ $sub == set ]] && (( nargs == 1 )); then _diligencectl_complete_tasks; fi ;;
            esac ;;
        history)
            case $sub in
                "") if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W $'--task\n--since\n--until\n--limit\n--all\n--device\n--json\n--help' -- "$cur"))
                    elif (( cword == command_at + 1 )); then COMPREPLY=($(compgen -W "${history_commands// /$'\n'}" -- "$cur")); fi ;;
                add) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--pauses\n--json\n--help' -- "$cur")) \
                     || { (( nargs == 0 )) && _diligencectl_complete_tasks; } ;;
                remove) COMPREPLY=($(compgen -W $'--json\n--help' -- "$cur")) ;;
                edit) COMPREPLY=($(compgen -W $'--task\n--json\n--help'$'\n'--start$'\n'--end$'\n'--note -- "$cur")) ;;
            esac ;;
        export) COMPREPLY=($(compgen -W $'--format\n--task\n--since\n--until\n--device\n--help'$'\n'--with-tasks$'\n'--segments -- "$cur")) ;;
        sync)
            case $sub in
                "") COMPREPLY=($(compgen -W "${sync_commands// /$'\n'}" -- "$cur")) ;;
                enable) if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W $'--new-device\n--name\n--json\n--help' -- "$cur"))
                        else compopt -o dirnames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); fi ;;
                status) COMPREPLY=($(compgen -W $'--json\n--names\n--help' -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W $'--json\n--help' -- "$cur")) ;;
            esac ;;
        timewarrior)
            case $sub in
                "") COMPREPLY=($(compgen -W "$timewarrior_commands" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W $'--dry-run\n--json\n--help' -- "$cur")) ;;
            esac ;;
        backup)
            [[ $cur == -* ]] && { COMPREPLY=($(compgen -W $'--json\n--help' -- "$cur")); return; }
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur")) ;;
        import)
            [[ $cur == -* ]] && { COMPREPLY=($(compgen -W $'--help'$'\n'--replace-tasks -- "$cur")); return; }
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur")) ;;
        task)
            case $sub in
                "") COMPREPLY=($(compgen -W "${task_commands// /$'\n'}" -- "$cur")) ;;
                list) COMPREPLY=($(compgen -W $'--json\n--names\n--help'$'\n'--all$'\n'--archived$'\n'--plain -- "$cur")) ;;
                show) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--json\n--help' -- "$cur")) \
                      || _diligencectl_complete_tasks ;;
                add) [[ $cur == -* ]] && COMPREPLY=($(compgen -W "${task_fields// /$'\n'}"$'\n'--help -- "$cur")) ;;
                edit) [[ $cur == -* ]] && COMPREPLY=($(compgen -W "${task_fields// /$'\n'}"$'\n'--name$'\n'--help -- "$cur")) \
                      || _diligencectl_complete_tasks ;;
                remove) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--yes\n--help' -- "$cur")) \
                        || _diligencectl_complete_tasks ;;
                archive) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--json\n--help' -- "$cur")) \
                         || _diligencectl_complete_tasks ;;
                unarchive) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--json\n--help' -- "$cur")) \
                           || _diligencectl_complete_tasks --archived ;;
            esac ;;
        *) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
    esac
}
complete -F _diligencectl diligencectl
