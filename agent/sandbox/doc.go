// Package sandbox runs the terminal tool's commands confined.
//
// A Policy names what a command may write (the working directory, the
// allowed paths, the temporary directories) and what it may never read
// (herald's home). Command turns "shell -c command" into a process that
// runs under it, in one of three modes:
//
//   - landlock: herald starts itself again as a small launcher (the
//     program's own executable, argv[0] "herald-sandbox"), which drops the
//     capabilities a container's root does not have (CAP_SYS_PTRACE,
//     CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH, …), restricts itself with
//     Landlock (read and execute everything but the home; write only the
//     writable directories and the usual device files), and execs the
//     shell. A landlocked process may not ptrace, nor read the /proc
//     environ or memory of, a process outside its domain: the gateway.
//   - bubblewrap: bwrap mounts / read-only, the writable directories
//     read-write, an empty tmpfs over the home, a fresh /proc in a new
//     PID namespace (the gateway is not in it), and drops the same
//     capabilities.
//   - none: no filesystem confinement; the launcher still drops the
//     capabilities, so that a root gateway's commands cannot read its
//     memory or environment.
//
// The launcher is entered from this package's init: any program that
// links it (herald, a custom herald, a test binary) execs the shell
// there, before main. It never returns; a launcher that cannot apply its
// policy exits 126 with the reason on stderr rather than run the command
// unconfined.
//
// Network egress is not limited in any mode.
package sandbox
