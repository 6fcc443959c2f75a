"""The daemon: its loop, the watcher, the schedule, the socket, systemd."""
