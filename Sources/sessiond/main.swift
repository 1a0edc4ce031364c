#if canImport(Glibc)
    import Glibc
#endif

// The daemon is not implemented yet; say so plainly instead of pretending to run.
let message = "sessiond: not implemented yet; see README.md\n"
_ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
exit(1)
