"""The `brainiac` command, one module per concern; root.py holds the group and `main`.

Below the commands: conventions (the vault flag, exit statuses, --json, times), answering (a
command's answer asked of the running daemon, or made in it), opening (the Memory a command
opens), group (the click group every brainiac group is). The commands, one module per group of
them: memory_commands, daemon_commands, job_commands, hook_commands, exchange_commands,
setup_commands. The only package that prints for the user.
"""
