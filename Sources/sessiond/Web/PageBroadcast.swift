import Foundation
import NIOCore
import Synchronization

/// Every open page's view of the daemon, made once for all of them: one reader of the daemon's events turns each into
/// the messages the pages show (asking the daemon once, not once per page), queued coalesced (`PageOutbox`); one
/// deliverer encodes what waits once and hands the same bytes to every page on its event loop (`PageWriter`), at
/// most once per ``interval``; and once a second, the round trips. What a page costs the daemon per event is so a few
/// writes on its loop, whatever the event rate: a page's own task only reads what the page asks.
final class PageBroadcast: Sendable {
    /// One open page.
    struct Page: Sendable {
        let writer: NIOLoopBound<PageWriter>
        let drags: PageDrags

        /// Sends `message` to this page alone (a refusal of what it asked).
        func send(_ message: PageMessage) {
            guard let text = PageBroadcast.encode(message) else { return }
            writer.eventLoop.execute {
                writer.value.enqueue(text, as: message.kind)
                writer.value.writeWaiting()
            }
        }

        /// Sends the page's first message, and from then on what is delivered to it.
        func start(with snapshot: PageSnapshot) {
            guard let text = PageBroadcast.encode(.snapshot(snapshot)) else { return }
            writer.eventLoop.execute { writer.value.start(with: text) }
        }
    }

    /// The shortest time between two deliveries: what happens meanwhile is coalesced (a 60 Hz drag is never held
    /// back; a flood of moves reaches the pages at most this often).
    static let interval = Duration.milliseconds(8)
    /// How often the pages get the round trips.
    static let roundTripInterval = Duration.seconds(1)

    private struct Pages {
        var open: [Int: Page] = [:]
        var nextID = 0
    }

    let feed: PageFeed
    private let pages = Mutex(Pages())
    private let outbox = PageOutbox()

    init(feed: PageFeed) {
        self.feed = feed
    }

    /// Adds an open page; what is delivered from now on reaches it (after its snapshot).
    func add(_ page: Page) -> Int {
        pages.withLock { pages in
            pages.nextID += 1
            pages.open[pages.nextID] = page
            return pages.nextID
        }
    }

    /// The page went.
    func remove(_ id: Int) {
        _ = pages.withLock { $0.open.removeValue(forKey: id) }
    }

    private var open: [Page] { pages.withLock { Array($0.open.values) } }
    /// The pages open now (for tests and diagnostics).
    var pageCount: Int { pages.withLock { $0.open.count } }
    private var anyOpen: Bool { pages.withLock { !$0.open.isEmpty } }

    /// Reads the daemon's events and delivers them until the events end or the task is cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.read() }
            group.addTask { await self.deliver() }
            group.addTask { await self.measure() }
            await group.next()
            group.cancelAll()
        }
        outbox.finish()
    }

    /// Turns each event into the messages it makes for the pages, while any page is open.
    private func read() async {
        let me = feed.dispatcher.session.peerID
        for await event in feed.hub.subscribe() {
            guard anyOpen else { continue }
            if case .app(.holder(let view, let holder)) = event {
                // A pick-up of a page answered: a move of it that waited for the answer goes now.
                for page in open {
                    guard let move = page.drags.holder(of: view, isThisDevice: holder.map { $0 == me }) else {
                        continue
                    }
                    if let refusal = await feed.perform(move) { page.send(.error(refusal)) }
                }
            }
            var ownMove = false
            if case .app(.move(_, _, _, let peer)) = event { ownMove = peer == me }
            for message in await feed.changes(after: event) {
                outbox.post(PageOutbox.Update(message: message, ownMove: ownMove))
            }
        }
        outbox.finish()
    }

    /// Encodes what waits once and hands it to every page on its loop. Updates that come within the interval of the
    /// last delivery wait out the rest of it, and whatever else came meanwhile goes with them; a drag at 60 Hz never
    /// waits (nor sets a timer).
    private func deliver() async {
        let clock = ContinuousClock()
        let encoder = JSONEncoder()
        var last: ContinuousClock.Instant?
        while var updates = await outbox.next() {
            if let last, clock.now < last + Self.interval {
                try? await clock.sleep(until: last + Self.interval)
                updates = outbox.merge(updates)
            }
            last = clock.now
            let frames = updates.compactMap { update in
                (try? encoder.encode(update.message)).map { (text: ByteBuffer(bytes: $0), update: update) }
            }
            let byLoop = Dictionary(grouping: open) { ObjectIdentifier($0.writer.eventLoop) }
            for pages in byLoop.values {
                pages[0].writer.eventLoop.execute {
                    for page in pages {
                        let writer = page.writer.value
                        for (text, update) in frames {
                            if update.ownMove, case .bubble(let bubble) = update.message,
                                page.drags.isEcho(UInt8(clamping: bubble.view), Float(bubble.x), Float(bubble.y))
                            {
                                continue  // this page's own move: it is already where the page put it
                            }
                            writer.enqueue(text, as: update.message.kind)
                        }
                        writer.writeWaiting()
                    }
                }
            }
        }
    }

    /// The round trip of every link, once a second, while a page is open and a peer connected.
    private func measure() async {
        while (try? await Task.sleep(for: Self.roundTripInterval)) != nil {
            guard anyOpen else { continue }
            let samples = await feed.roundTrips()
            guard !samples.isEmpty else { continue }
            outbox.post(
                PageOutbox.Update(message: .rtt(at: Int64(Date().timeIntervalSince1970 * 1000), samples: samples)))
        }
    }

    /// A message as the text of its frame.
    static func encode(_ message: PageMessage) -> ByteBuffer? {
        (try? JSONEncoder().encode(message)).map { ByteBuffer(bytes: $0) }
    }
}
