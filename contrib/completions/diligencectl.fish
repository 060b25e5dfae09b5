# fish completion for diligencectl. Install to /usr/share/fish/vendor_completions.d/
# (make install does). Task and device names come from the running daemon.

set -l commands start note interrupt pause resume toggle stop skip extend away back discard-away status watch task stats report week plan history export import sync timewarrior reload version doctor backup help
set -l task_commands list show add edit archive unarchive remove
set -l days today tomorrow monday tuesday wednesday thursday friday saturday sunday

# The line's --socket option, if it names one: the daemon the names are asked of.
function __diligencectl_socket
    set -l words (commandline -opc)
    for i in (seq (count $words))
        switch $words[$i]
            case --socket
                echo --socket
                echo $words[(math $i + 1)]
            case '--socket=*'
                echo $words[$i]
        end
    end
end

# The daemon's task names, one a line (fish inserts them escaped; nothing in them is run): those
# not archived, or with --archived only the archived ones.
function __diligencectl_tasks
    diligencectl (__diligencectl_socket) task list --names $argv 2>/dev/null
end

# `this` and the names of the devices the daemon knows (--device), one a line.
function __diligencectl_devices
    echo this
    diligencectl (__diligencectl_socket) sync status --names 2>/dev/null
end

# Whether the command is `task` with one of the given subcommands.
function __diligencectl_task_sub
    __fish_seen_subcommand_from task; and __fish_seen_subcommand_from $argv
end

# The words before the cursor without the program and the options (and their values):
# `plan set mon` for `diligencectl --socket S plan set --offset 1 mon`. Unlike
# __fish_seen_subcommand_from, this tells `week` the command from `stats week`.
function __diligencectl_words
    set -l valued socket format work short-break long-break long-break-every breaks autostart focus-mode \
        color goal reminder sound description away dnd mode break-ratio min-break max-break flow-nudge overtime void-on-interrupt name task device offset since until limit pauses taskwarrior
    set -l skip 0
    for word in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $word
            case '--*=*' '-h'
            case '--*'
                contains -- (string sub -s 3 -- $word) $valued; and set skip 1
            case '*'
                echo $word
        end
    end
end

# Whether those words begin with the arguments (`*` matches any word): `__diligencectl_in plan set`.
function __diligencectl_in
    set -l words (__diligencectl_words)
    test (count $words) -ge (count $argv); or return 1
    for i in (seq (count $argv))
        test "$argv[$i]" = '*'; or test "$argv[$i]" = "$words[$i]"; or return 1
    end
end

# Whether those words are exactly the arguments: `__diligencectl_is plan set '*'` for plan set's TASK.
function __diligencectl_is
    __diligencectl_in $argv; and test (count (__diligencectl_words)) -eq (count $argv)
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
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a away -d 'say you left the computer'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a back -d 'say you are back'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a discard-away -d 'take counted time away out of the work'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a status -d 'show what the timer is doing'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a watch -d 'print the status on every change'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a task -d 'list, show, add, edit, archive or remove tasks'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a stats -d 'statistics of a day, week, month, year or everything, with pictures'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a report -d 'the statistics as a page (--html) or a heat-map (--svg)'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a week -d 'one ISO week: plan and done, day by day'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a plan -d "plan a task for a day, or clear a day's plan"
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a history -d 'list, add, remove or edit recorded sessions'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a export -d 'print sessions as CSV, JSON lines or iCalendar'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a import -d 'add the sessions of a JSON-lines file'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a sync -d "keep this device's journal in a sync folder, show or stop it"
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a version -d 'print the versions'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a timewarrior -d 'make Timewarrior hold the history exactly'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a doctor -d 'say what works: notifications, sound, presence, sync, hooks'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a backup -d 'copy the database to a new file while the daemon runs'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a reload -d 're-read the daemon configuration'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a help -d 'show help for a command'

complete -c diligencectl -n "__fish_seen_subcommand_from start" -a '(__diligencectl_tasks)'
complete -c diligencectl -n "__fish_seen_subcommand_from start" -l note -x -d 'a note for the work session'
complete -c diligencectl -n "__fish_seen_subcommand_from start" -l taskwarrior -x -d 'follow a Taskwarrior task (ID or UUID)'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a note -d 'note the running work phase'
complete -c diligencectl -n "not __fish_seen_subcommand_from $commands" -a interrupt -d 'mark the running work with an interruption'
complete -c diligencectl -n "__fish_seen_subcommand_from interrupt" -l internal -d 'your own thought broke in'
complete -c diligencectl -n "__fish_seen_subcommand_from interrupt" -l external -d 'someone or something else did'
complete -c diligencectl -n "__fish_seen_subcommand_from help" -a "$commands"
complete -c diligencectl -n "__fish_seen_subcommand_from status watch" -l json -d 'print JSON'
complete -c diligencectl -n "__fish_seen_subcommand_from status watch" -l waybar -d 'print JSON for waybar'
complete -c diligencectl -n "__fish_seen_subcommand_from status watch" -l format -x -d 'fill in a template'
complete -c diligencectl -n "__fish_seen_subcommand_from watch" -l no-reconnect -d 'exit when the daemon goes away'
complete -c diligencectl -n "__fish_seen_subcommand_from watch" -l bell -d 'ring the bell when a phase ends'

complete -c diligencectl -n "__fish_seen_subcommand_from task; and not __fish_seen_subcommand_from $task_commands" -a "$task_commands"
complete -c diligencectl -n "__diligencectl_task_sub list" -l json -d 'print JSON'
complete -c diligencectl -n "__diligencectl_task_sub list" -l names -d 'print only the names'
complete -c diligencectl -n "__diligencectl_task_sub show" -l json -d 'print JSON'
complete -c diligencectl -n "__diligencectl_task_sub list" -l all -d 'archived tasks too'
complete -c diligencectl -n "__diligencectl_task_sub list" -l archived -d 'only the archived tasks'
complete -c diligencectl -n "__diligencectl_task_sub archive unarchive" -l json -d 'print JSON'
complete -c diligencectl -n "__diligencectl_task_sub show edit archive remove" -a '(__diligencectl_tasks)'
complete -c diligencectl -n "__diligencectl_task_sub unarchive" -a '(__diligencectl_tasks --archived)'
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
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l away -x -a 'pause continue abandon default' -d 'what leaving does to work'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l dnd -x -a 'on off default' -d 'do not disturb during work'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l mode -x -a 'pomodoro flow' -d 'pomodoro or flow'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l break-ratio -x -a '1/5' -d 'break a flow earns: N/M or a table'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l min-break -x -d 'shortest earned break'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l max-break -x -d 'longest earned break'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l flow-nudge -x -a off -d 'notification after this much flow, or off'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l overtime -x -a 'yes no' -d 'work goes on past the bell'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l void-on-interrupt -x -a 'on off' -d 'an external interruption voids the work'
    complete -c diligencectl -n "__diligencectl_task_sub $sub" -l description -x -d 'free text'
end

# Statistics, the week and its plan, history, export and import (docs/statistics.md).
complete -c diligencectl -n "__diligencectl_is stats; or __diligencectl_is report" -a 'today day week month year all' -d 'period'
complete -c diligencectl -n "__diligencectl_is stats '*'; or __diligencectl_is report '*'" -a 'yesterday monday tuesday wednesday thursday friday saturday sunday' -d 'a day of the period'
complete -c diligencectl -n "__diligencectl_in stats; or __diligencectl_in report; or __diligencectl_is history; or __diligencectl_in export" -l task -x -a '(__diligencectl_tasks)' -d 'only this task'
complete -c diligencectl -n "__diligencectl_in stats; or __diligencectl_in report; or __diligencectl_in week; or __diligencectl_in plan" -l offset -x -d 'periods from this one: -1 the previous'
complete -c diligencectl -n "__diligencectl_in stats; or __diligencectl_in week; or __diligencectl_task_sub list" -l plain -d 'no colours'
complete -c diligencectl -n "__diligencectl_in report" -l html -d 'the report page'
complete -c diligencectl -n "__diligencectl_in report" -l svg -d 'the heat-map alone'
complete -c diligencectl -n "__diligencectl_in stats; or __diligencectl_in week; or __diligencectl_in history" -l json -d 'print JSON'

complete -c diligencectl -n "__diligencectl_is plan" -a set -d 'plan TASK for DAY'
complete -c diligencectl -n "__diligencectl_is plan" -a clear -d "forget DAY's plan"
complete -c diligencectl -n "__diligencectl_is plan set; or __diligencectl_is plan clear" -a "$days" -d 'day'
complete -c diligencectl -n "__diligencectl_is plan set '*'" -a '(__diligencectl_tasks)'

# add, remove and edit only right after `history`, as the client reads them.
complete -c diligencectl -n "__diligencectl_is history; and test (commandline -opc)[-1] = history" -a add -d 'record a session the timer missed'
complete -c diligencectl -n "__diligencectl_is history; and test (commandline -opc)[-1] = history" -a remove -d 'delete a recorded session'
complete -c diligencectl -n "__diligencectl_is history; and test (commandline -opc)[-1] = history" -a edit -d "change a session's task"
complete -c diligencectl -n "__diligencectl_is history; or __diligencectl_in export" -l since -x -d 'from this day (YYYY-MM-DD) on'
complete -c diligencectl -n "__diligencectl_is history; or __diligencectl_in export" -l until -x -d 'up to and including this day (YYYY-MM-DD)'
complete -c diligencectl -n "__diligencectl_is history" -l limit -x -d 'only the most recent N'
complete -c diligencectl -n "__diligencectl_is history" -l all -d 'every session'
complete -c diligencectl -n "__diligencectl_in stats; or __diligencectl_in report; or __diligencectl_in week; or __diligencectl_is history; or __diligencectl_in export" -l device -x -a '(__diligencectl_devices)' -d "one device's sessions: this, a device's name or id"
complete -c diligencectl -n "__diligencectl_is history add" -a '(__diligencectl_tasks)'
complete -c diligencectl -n "__diligencectl_in history add" -l pauses -x -d 'pauses taken (default 0)'
complete -c diligencectl -n "__diligencectl_in history edit" -l task -x -a '(__diligencectl_tasks)' -d 'move the session to TASK'
complete -c diligencectl -n "__diligencectl_in history edit" -l start -x -d 'a new start'
complete -c diligencectl -n "__diligencectl_in history edit" -l end -x -d 'a new end'
complete -c diligencectl -n "__diligencectl_in history edit" -l note -x -d 'a new note'

complete -c diligencectl -n "__diligencectl_in export" -l format -x -a 'csv jsonl ics' -d 'output format (default jsonl)'
complete -c diligencectl -n "__diligencectl_in export" -l with-tasks -d 'task definitions and the plan first'
complete -c diligencectl -n "__diligencectl_in export" -l segments -d 'ics: one event per focus segment'
complete -c diligencectl -n "__diligencectl_is import" -l replace-tasks -d 'imported tasks replace existing settings'
complete -c diligencectl -n "__diligencectl_is import" -F -d 'file (- for standard input)'
complete -c diligencectl -n "__diligencectl_is backup" -l json -d 'print JSON'
complete -c diligencectl -n "__diligencectl_is backup" -F -d 'new file for the copy'

# The Timewarrior mirror (docs/integrations.md).
complete -c diligencectl -n "__diligencectl_is timewarrior" -a sync -d 'make Timewarrior hold the history exactly'
complete -c diligencectl -n "__diligencectl_in timewarrior sync" -l dry-run -d 'change nothing; print what would change'
complete -c diligencectl -n "__diligencectl_in timewarrior sync" -l json -d 'print JSON'

# The sync folder (docs/sync.md).
complete -c diligencectl -n "__diligencectl_is sync" -a enable -d "keep this device's journal in DIR"
complete -c diligencectl -n "__diligencectl_is sync" -a status -d 'show the sync folder, this device, its journal and the devices known here'
complete -c diligencectl -n "__diligencectl_is sync" -a disable -d 'stop writing the journal'
complete -c diligencectl -n "__diligencectl_is sync enable" -x -a '(__fish_complete_directories)' -d 'sync folder'
complete -c diligencectl -n "__diligencectl_in sync enable" -l name -x -d "this device's name"
complete -c diligencectl -n "__diligencectl_in sync enable" -l new-device -d "make this database a new device"
complete -c diligencectl -n "__diligencectl_in sync" -l json -d 'print JSON'
complete -c diligencectl -n "__diligencectl_in sync status" -l names -d "print only the devices' names"
