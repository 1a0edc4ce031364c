import NIOCore
import NIOPosix

extension SessionDaemon {
    /// The daemon's one thread of work: every socket (the session's links, the control socket, the page) and every
    /// task runs on this event loop, so that a message, a command or a page's move crosses no thread on its way. Work
    /// that blocks (files, hashing) goes to NIO's thread pool; Avahi and Bluetooth keep their own threads.
    static var loop: any EventLoop { MultiThreadedEventLoopGroup.singleton.next() }

    /// Makes NIO's shared group one thread and Swift Concurrency's global executor (before any task starts): tasks
    /// resumed by a socket's event then run on the same thread as the socket, with no hand-over to another pool.
    static func runOnOneLoop() {
        NIOSingletons.groupLoopCountSuggestion = 1
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
