import Glibc
import NIOCore

/// A listener's first handler: when accept fails for want of descriptors or memory, it tells the session, which
/// frees a descriptor by closing the oldest connection that has not proved itself.
///
/// Backing off alone does not help: SwiftNIO keeps a listener registered for reads after a failed accept, and the
/// connection waiting in the backlog makes it readable again at once, so the loop would spin. Freeing a descriptor
/// lets the next accept succeed; the accepted connection then meets the caps on unproven connections.
final class ListenerGuard: ChannelInboundHandler {
    typealias InboundIn = any Channel

    private let exhausted: () -> Void

    init(exhausted: @escaping () -> Void) {
        self.exhausted = exhausted
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode) {
            exhausted()
            return
        }
        context.fireErrorCaught(error)
    }
}
