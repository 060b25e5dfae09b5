# bash completion for diligencectl. Install to /usr/share/bash-completion/completions/diligencectl
# (make install does). Task names come from the running daemon: `diligencectl task list --names`.

_diligencectl_tasks() {
    diligencectl "${socket[@]}" task list --names 2>/dev/null
}

_diligencectl() {
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    }
    local commands="start pause resume toggle stop skip extend status watch task reload version help"
    local task_commands="list show add edit remove"
    local task_fields="--work --short-break --long-break --long-break-every --breaks --autostart --focus-mode --color --goal --reminder --sound --description"
    local formats="--json --waybar --format"

    # Find the command (and task subcommand) after the global options.
    local i=1 command="" sub="" socket=()
    while (( i < cword )); do
        case ${words[i]} in
            --socket) socket=(--socket "${words[i+1]}"); (( i += 2 )); continue ;;
            --socket=*) socket=("${words[i]}") ;;
            -*) ;;
            *) if [[ -z $command ]]; then command=${words[i]}
               elif [[ $command == task && -z $sub ]]; then sub=${words[i]}; fi ;;
        esac
        (( i++ ))
    done

    case $prev in
        --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --breaks|--focus-mode) COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
        --autostart) COMPREPLY=($(compgen -W "none breaks work all" -- "$cur")); return ;;
        --color) COMPREPLY=($(compgen -W "red orange yellow green cyan blue purple" -- "$cur")); return ;;
        --reminder) COMPREPLY=($(compgen -W "off" -- "$cur")); return ;;
        --sound) COMPREPLY=($(compgen -W "off" -- "$cur")); return ;;
        --format) COMPREPLY=("'{icon} {task} {remaining}'"); return ;;
        --work|--short-break|--long-break|--long-break-every|--goal|--description|--name) return ;;
    esac

    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$commands --socket --help --version" -- "$cur"))
        return
    fi
    local IFS=$'\n'
    case $command in
        start)
            [[ $cur == -* ]] && { COMPREPLY=($(compgen -W "--help" -- "$cur")); return; }
            COMPREPLY=($(compgen -W "$(_diligencectl_tasks)" -- "$cur")) ;;
        status) COMPREPLY=($(compgen -W "${formats// /$'\n'}"$'\n'--help -- "$cur")) ;;
        watch) COMPREPLY=($(compgen -W "${formats// /$'\n'}"$'\n'--no-reconnect$'\n'--help -- "$cur")) ;;
        help) COMPREPLY=($(compgen -W "${commands// /$'\n'}" -- "$cur")) ;;
        task)
            case $sub in
                "") COMPREPLY=($(compgen -W "${task_commands// /$'\n'}" -- "$cur")) ;;
                list) COMPREPLY=($(compgen -W $'--json\n--names\n--help' -- "$cur")) ;;
                show) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--json\n--help' -- "$cur")) \
                      || COMPREPLY=($(compgen -W "$(_diligencectl_tasks)" -- "$cur")) ;;
                add) [[ $cur == -* ]] && COMPREPLY=($(compgen -W "${task_fields// /$'\n'}"$'\n'--help -- "$cur")) ;;
                edit) [[ $cur == -* ]] && COMPREPLY=($(compgen -W "${task_fields// /$'\n'}"$'\n'--name$'\n'--help -- "$cur")) \
                      || COMPREPLY=($(compgen -W "$(_diligencectl_tasks)" -- "$cur")) ;;
                remove) [[ $cur == -* ]] && COMPREPLY=($(compgen -W $'--yes\n--help' -- "$cur")) \
                        || COMPREPLY=($(compgen -W "$(_diligencectl_tasks)" -- "$cur")) ;;
            esac ;;
        *) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
    esac
}
complete -F _diligencectl diligencectl
