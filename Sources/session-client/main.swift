import LanSession

#if canImport(Glibc)
    import Glibc
#endif

// The client is not implemented yet; say so plainly instead of pretending to run.
let message = "session-client: not implemented yet (no daemon to talk to); see README.md\n"
_ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
exit(1)
