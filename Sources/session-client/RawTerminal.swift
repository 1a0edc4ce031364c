import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal in raw mode on the alternate screen, with the cursor hidden, until `restore()`.
///
/// A signal that would end the process (TERM, HUP, INT, QUIT) restores the terminal before it exits.
final class RawTerminal {
    private var original: termios
    private var restored = false

    /// Switches stdin to raw mode and stdout to the alternate screen.
    init() throws(ClientError) {
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else {
            throw ClientError(.usage, "cannot read the terminal's settings: \(String(cString: strerror(errno)))")
        }
        original = settings
        TerminalRescue.arm(settings)
        var raw = settings
        cfmakeraw(&raw)
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else {
            TerminalRescue.disarm()
            throw ClientError(.usage, "cannot set the terminal to raw mode: \(String(cString: strerror(errno)))")
        }
        Output.write(TerminalRescue.enterSequence, to: STDOUT_FILENO)
    }

    deinit { restore() }

    /// Puts the terminal back as it was; safe to call more than once.
    func restore() {
        guard !restored else { return }
        restored = true
        Output.write(TerminalRescue.leaveSequence, to: STDOUT_FILENO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
        TerminalRescue.disarm()
    }
}

/// What the signal handler needs to put the terminal back: kept in globals because a C handler captures nothing.
enum TerminalRescue {
    /// Alternate screen on, cursor hidden, screen cleared.
    static let enterSequence = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J"
    /// Cursor shown, alternate screen off.
    static let leaveSequence = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"

    /// The signals after which the terminal is restored.
    static let signals: [Int32] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT]

    /// Remembers `settings` and installs the handlers.
    static func arm(_ settings: termios) {
        rescueSettings = settings
        rescueBytes = Array(leaveSequence.utf8)
        for signal in signals { _ = Glibc.signal(signal, rescueTerminal) }
    }

    /// Uninstalls the handlers.
    static func disarm() {
        for signal in signals { _ = Glibc.signal(signal, SIG_DFL) }
    }
}

/// The settings to restore; written before the handlers are installed, read only by them.
nonisolated(unsafe) private var rescueSettings = termios()
/// The escape sequence that leaves the view, ready for a handler that must not allocate.
nonisolated(unsafe) private var rescueBytes: [UInt8] = []

/// Restores the terminal and exits as the signal would have.
private func rescueTerminal(_ signal: Int32) {
    rescueBytes.withUnsafeBytes { _ = write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    tcsetattr(STDIN_FILENO, TCSANOW, &rescueSettings)
    _exit(128 + signal)
}
