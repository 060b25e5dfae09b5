# fish completion for diligencectl. Install to /usr/share/fish/vendor_completions.d/
# (make install does). Task names come from the running daemon.

set -l commands start pause resume toggle stop skip extend status watch task reload version help
set -l task_commands list show add edit remove

function __diligencectl_tasks
    diligencectl task list --names 2>/dev/null
end

function __diligencectl_task_sub -a sub
    __fish_seen_subcommand_from task; and __fish_seen_subcommand_from $sub
end

complete -c diligencectl -f
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -l socket -r -F -d 'control socket'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -l version -d "print the client's version"
complete -c diligencectl -s h -l help -d 'show help'

complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a start -d "start a task's work phase, or the pending phase"
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a pause -d 'pause the running phase'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a resume -d 'resume the paused phase'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a toggle -d 'pause, resume or start'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a stop -d 'give up the current phase'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a skip -d 'end the phase now and move on'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a extend -d 'add time to the phase'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a status -d 'show what the timer is doing'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a watch -d 'print the status on every change'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a task -d 'list, show, add, edit or remove tasks'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a version -d 'print the versions'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a reload -d 're-read the daemon configuration'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a help -d 'show help for a command'

complete -c diligencectl -n "__fish_seen_subcommand_from start" -a '(__diligencectl_tasks)'
complete -c diligencectl -n "__fish_seen_subcommand_from help" -a "$commands"
complete -c diligencectl -n "__fish_seen_subcommand_from status watch" -l json -d 'print JSON'
complete -c diligencectl -n "__fish_seen_subcommand_from status watch" -l waybar -d 'print JSON for waybar'
complete -c diligencectl -n "__fish_seen_subcommand_from status watch" -l format -x -d 'fill in a template'
complete -c diligencectl -n "__fish_seen_subcommand_from watch" -l no-reconnect -d 'exit when the daemon goes away'

complete -c diligencectl -n "__fish_seen_subcommand_from task; and not __fish_seen_subcommand_from $task_commands" -a "$task_commands"
complete -c diligencectl -n "__diligencectl_task_sub list" -l json -d 'print JSON'
complete -c diligencectl -n "__diligencectl_task_sub list" -l names -d 'print only the names'
complete -c diligencectl -n "__diligencectl_task_sub show" -l json -d 'print JSON'
complete -c diligencectl -n "__diligencectl_task_sub show edit remove" -a '(__diligencectl_tasks)'
complete -c diligencectl -n "__diligencectl_task_sub remove" -l yes -d 'remove without asking'
complete -c diligencectl -n "__diligencectl_task_sub edit" -l name -x -d 'rename the task'
for sub in add edit
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l work -x -d 'work phase length'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l short-break -x -d 'short break length'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l long-break -x -d 'long break length'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l long-break-every -x -d 'work rounds before a long break'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l breaks -x -a 'on off' -d 'breaks on or off'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l autostart -x -a 'none breaks work all' -d 'phases that start by themselves'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l focus-mode -x -a 'on off' -d 'strict focus mode'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l color -x -a 'red orange yellow green cyan blue purple' -d 'colour'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l goal -x -d 'completed sessions per day'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l reminder -x -a off -d 'daily reminder HH:MM or off'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l sound -x -a off -d 'ambient sound or off'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l description -x -d 'free text'
end
