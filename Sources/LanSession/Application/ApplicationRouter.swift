import NIOCore
import WireCodec

/// The applications a session carries, and which one takes each message: a table by application kind and one by
/// application number, built as applications are added, so that a message finds its application with one array
/// lookup.
struct ApplicationRouter {
    private(set) var applications: [any SessionApplication] = []
    /// The index in `applications` of the one that takes each kind, by the kind's raw value.
    private var byKind = [Int?](repeating: nil, count: 256)
    /// The index of the one that takes each application number.
    private var byNumber = [Int?](repeating: nil, count: 256)

    /// Adds `application`, which takes messages of its kinds and numbers from now on.
    ///
    /// - Throws: ``SessionError/Code/invalidArgument`` when it takes a kind that is not an application command, or
    ///   a kind or number that another application takes.
    mutating func add(_ application: any SessionApplication) throws(SessionError) {
        let kinds = application.applicationKinds
        let numbers = application.appNumbers
        for kind in kinds {
            guard MessageKind.applicationKinds.contains(kind) else {
                throw SessionError(.invalidArgument, "kind \(kind) is not an application kind (0x20...0x29)")
            }
            guard byKind[Int(kind)] == nil else {
                throw SessionError(.invalidArgument, "another application takes kind \(kind) already")
            }
        }
        for number in numbers {
            guard number != 0 else { throw SessionError(.invalidArgument, "application number 0 is not a number") }
            guard byNumber[Int(number)] == nil else {
                throw SessionError(.invalidArgument, "another application takes application number \(number) already")
            }
        }
        let index = applications.count
        applications.append(application)
        for kind in kinds { byKind[Int(kind)] = index }
        for number in numbers { byNumber[Int(number)] = index }
    }

    /// The application that takes `message`, if any.
    func application(for message: Message) -> (any SessionApplication)? {
        let index: Int?
        switch message {
        case .application(let message): index = byKind[Int(message.kind)]
        case .appMessage(let message): index = byNumber[Int(message.app)]
        default: index = nil
        }
        return index.map { applications[$0] }
    }

    /// Calls `body` with every application, in the order they were added.
    func forEach(_ body: (any SessionApplication) -> Void) {
        for application in applications { body(application) }
    }
}
