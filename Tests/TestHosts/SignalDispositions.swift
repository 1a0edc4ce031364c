#if canImport(Glibc)
    import Glibc
#endif

/// Default signal handling, for a process whose caller may have handed down blocked or ignored signals (a
/// multithreaded test runner that spawns from a worker thread blocks nearly all of them). Every process of a lab
/// would inherit that and shrug off SIGTERM, so the command line starts afresh, and `exec` passes this on.
public enum SignalDispositions {
    /// Unblocks every signal and sets every signal's disposition to the default.
    public static func reset() {
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        for signal in 1..<Int32(65) where signal != SIGKILL && signal != SIGSTOP {
            Glibc.signal(signal, SIG_DFL)
        }
    }
}
