import NIOCore
import Testing
import WireCodec

@testable import LanSession

@Suite("LinkStateMachine")
struct LinkStateMachineTests {
    let hello = Hello(peerID: PeerID(2), incarnation: 9, displayName: "two", sessionName: "s")
    let invitation = Invitation(context: [1, 2], timeoutMilliseconds: 30_000)

    /// A machine of `role` brought to ready through the whole handshake.
    func ready(_ role: LinkStateMachine.Role, token: UInt64 = 42) -> LinkStateMachine {
        var machine = LinkStateMachine(role: role)
        _ = machine.received(.hello(hello))
        _ = machine.admit(invitation: invitation)
        switch role {
        case .dialer:
            _ = machine.received(.accept(Accept(linkToken: token)))
        case .acceptor:
            _ = machine.received(.invitation(invitation))
            _ = machine.accept(token: token)
        }
        return machine
    }

    @Test("dialer: hello, identify, invitation, accept: ready with the acceptor's token")
    func dialerHandshake() {
        var machine = LinkStateMachine(role: .dialer)
        #expect(machine.received(.hello(hello)) == [.identify(hello)])
        #expect(machine.state == .identifying(hello))
        #expect(machine.admit(invitation: invitation) == [.send(.invitation(invitation))])
        #expect(machine.state == .awaitingAnswer(hello))
        #expect(machine.received(.accept(Accept(linkToken: 7))) == [.ready(token: 7)])
        #expect(machine.state == .ready(hello, token: 7))
        #expect(machine.isHandshaken && !machine.isActive)
    }

    @Test("acceptor: hello, identify, wait for the invitation, consider it, accept with a token")
    func acceptorHandshake() {
        var machine = LinkStateMachine(role: .acceptor)
        #expect(machine.received(.hello(hello)) == [.identify(hello)])
        #expect(machine.admit(invitation: invitation).isEmpty)
        #expect(machine.state == .awaitingInvitation(hello))
        #expect(machine.received(.invitation(invitation)) == [.consider(invitation)])
        #expect(machine.state == .deciding(hello))
        #expect(machine.accept(token: 9) == [.send(.accept(Accept(linkToken: 9))), .ready(token: 9)])
        #expect(machine.token == 9)
    }

    @Test("messages out of place are protocol errors: bye and close")
    func violations() {
        let cases: [(LinkStateMachine, Message)] = [
            (LinkStateMachine(role: .dialer), .invitation(invitation)),
            (LinkStateMachine(role: .acceptor), .accept(Accept(linkToken: 1))),
            (LinkStateMachine(role: .acceptor), .resume(Resume(received: 0, nextSequence: 1))),
            (LinkStateMachine(role: .acceptor), .counterIncrement(count: 1)),
            (LinkStateMachine(role: .acceptor), .ack(sequence: 1)),
            (ready(.dialer), .hello(hello)),
            (ready(.acceptor), .invitation(invitation)),
        ]
        for (start, message) in cases {
            var machine = start
            let actions = machine.received(message)
            #expect(actions.first == .send(.bye(.protocolError)), "\(message.kind) in \(start.state)")
            #expect(machine.isClosed)
            // Whatever else arrives is ignored.
            #expect(machine.received(.ping(Ping(nonce: 1, timestamp: 2))).isEmpty)
        }
    }

    @Test("a standby link delivers control messages and drops commands; the active one delivers both")
    func standbyAndActive() {
        var machine = ready(.acceptor)
        #expect(
            machine.received(.ping(Ping(nonce: 1, timestamp: 2))) == [.deliver(.ping(Ping(nonce: 1, timestamp: 2)))])
        #expect(machine.received(.ack(sequence: 3)) == [.deliver(.ack(sequence: 3))])
        #expect(machine.received(.counterIncrement(count: 4)) == [.dropStale(.counterIncrement)])
        // The leader activates it.
        let resume = Resume(received: 5, nextSequence: 6)
        #expect(machine.received(.resume(resume)) == [.activatedByPeer(resume)])
        #expect(
            machine.respond(Resume(received: 1, nextSequence: 2)) == [
                .send(.resume(Resume(received: 1, nextSequence: 2)))
            ])
        #expect(machine.isActive)
        #expect(machine.received(.counterIncrement(count: 4)) == [.deliver(.counterIncrement(count: 4))])
        // Another link takes over: a standby again.
        machine.deactivate()
        #expect(machine.received(.counterIncrement(count: 5)) == [.dropStale(.counterIncrement)])
    }

    @Test("leader: activating holds until the answer, then the link is active")
    func leaderActivation() {
        var machine = ready(.dialer)
        let mine = Resume(received: 10, nextSequence: 20)
        #expect(machine.activate(mine) == [.send(.resume(mine))])
        #expect(machine.isActivating && !machine.isActive)
        // A command that crossed the activation is not counted: it is resent after the answer.
        #expect(machine.received(.counterIncrement(count: 1)) == [.dropStale(.counterIncrement)])
        let theirs = Resume(received: 19, nextSequence: 11)
        #expect(machine.received(.resume(theirs)) == [.activationAnswered(theirs)])
        #expect(machine.isActive)
        // Activating twice is a no-op.
        #expect(machine.activate(mine).isEmpty)
    }

    @Test("bye: a departure once handshaken, a refusal before; decline: a reason; both close")
    func byeAndDecline() {
        var handshaken = ready(.dialer)
        #expect(
            handshaken.received(.bye(.leaving)) == [
                .peerSaidBye(.leaving, wasHandshaken: true), .close("bye (leaving)"),
            ])
        var early = LinkStateMachine(role: .dialer)
        _ = early.received(.hello(hello))
        #expect(
            early.received(.bye(.leaving)) == [.peerSaidBye(.leaving, wasHandshaken: false), .close("bye (leaving)")])
        var declined = LinkStateMachine(role: .dialer)
        _ = declined.received(.hello(hello))
        _ = declined.admit(invitation: invitation)
        #expect(declined.received(.decline(.full)) == [.declined(.full), .close("declined (full)")])
        #expect(declined.isClosed)
    }

    @Test("leaving says bye on a handshaken link and declines a link in its handshake")
    func leaving() {
        var handshaken = ready(.acceptor)
        #expect(handshaken.leave(.replaced) == [.send(.bye(.replaced)), .close("bye (replaced)")])
        var early = LinkStateMachine(role: .acceptor)
        _ = early.received(.hello(hello))
        #expect(early.leave(.replaced) == [.send(.decline(.duplicateLink)), .close("replaced during the handshake")])
        #expect(early.leave(.leaving).isEmpty, "closed once")
    }

    @Test("deadlines: a hello within the hello timeout, the handshake within the handshake timeout")
    func deadlines() {
        var silent = LinkStateMachine(role: .acceptor)
        #expect(
            silent.tick(openFor: .milliseconds(1_900), proofTimeout: .seconds(2), handshakeTimeout: .seconds(32))
                .isEmpty)
        #expect(
            silent.tick(openFor: .milliseconds(2_100), proofTimeout: .seconds(2), handshakeTimeout: .seconds(32))
                == [.close("no hello within 2 s")])
        var deciding = LinkStateMachine(role: .acceptor)
        _ = deciding.received(.hello(hello))
        _ = deciding.admit(invitation: invitation)
        _ = deciding.received(.invitation(invitation))
        #expect(
            deciding.tick(openFor: .seconds(20), proofTimeout: .seconds(2), handshakeTimeout: .seconds(32)).isEmpty,
            "a person may be deciding")
        #expect(
            !deciding.tick(openFor: .seconds(33), proofTimeout: .seconds(2), handshakeTimeout: .seconds(32)).isEmpty)
        var handshaken = ready(.dialer)
        #expect(
            handshaken.tick(openFor: .seconds(3_600), proofTimeout: .seconds(2), handshakeTimeout: .seconds(32)).isEmpty
        )
    }
}

@Suite("LinkStateMachine with encryption")
struct LinkStateMachineSecretTests {
    let hello = Hello(peerID: PeerID(2), incarnation: 9, displayName: "two", sessionName: "s")
    let invitation = Invitation(context: [], timeoutMilliseconds: 30_000)
    let message = [UInt8](repeating: 7, count: 48)

    @Test("hello, then the Noise messages go to the session, then the handshake goes on as without encryption")
    func handshaken() {
        var machine = LinkStateMachine(role: .dialer)
        #expect(machine.received(.hello(hello)) == [.identify(hello)])
        machine.handshake()
        #expect(machine.state == .handshaking(hello))
        #expect(machine.isUnproven)
        #expect(machine.received(.noise(message)) == [.handshakeMessage(message)])
        #expect(machine.admit(invitation: invitation) == [.send(.invitation(invitation))])
        #expect(!machine.isUnproven)
    }

    @Test("during the handshake anything but noise, decline and bye is a protocol error; noise after it too")
    func beforeProof() {
        for message: Message in [
            .invitation(invitation), .ping(Ping(nonce: 1, timestamp: 2)), .members([]), .counterIncrement(count: 1),
            .resume(Resume(received: 0, nextSequence: 1)), .trust([]), .pairing(.request),
        ] {
            var machine = LinkStateMachine(role: .acceptor)
            _ = machine.received(.hello(hello))
            machine.handshake()
            #expect(machine.received(message).last?.isClose == true, "\(message.kind) was taken during the handshake")
            #expect(machine.isClosed)
        }
        var unasked = LinkStateMachine(role: .acceptor)
        _ = unasked.received(.hello(hello))
        #expect(unasked.received(.noise(message)).last == .close("unexpected noise message"))
        var admitted = LinkStateMachine(role: .acceptor)
        _ = admitted.received(.hello(hello))
        _ = admitted.admit(invitation: invitation)
        #expect(admitted.received(.noise(message)).last == .close("unexpected noise message"))
    }

    @Test("a stranger may pair, ping and leave, and nothing else; pairing then admission goes on to the invitation")
    func stranger() {
        for message: Message in [
            .members([]), .counterIncrement(count: 1), .trust([]),
            .resume(Resume(received: 0, nextSequence: 1)), .data([1]),
        ] {
            var machine = LinkStateMachine(role: .acceptor)
            _ = machine.received(.hello(hello))
            machine.handshake()
            machine.becomeStranger()
            #expect(machine.isStranger)
            #expect(
                machine.received(message) == [
                    .send(.bye(.protocolError)), .close("\(message.kind) before the handshake"),
                ])
        }
        var machine = LinkStateMachine(role: .dialer)
        _ = machine.received(.hello(hello))
        machine.handshake()
        machine.becomeStranger()
        let ping = Ping(nonce: 1, timestamp: 2)
        #expect(machine.received(.ping(ping)) == [.deliver(.ping(ping))])
        #expect(machine.received(.pairing(.request)) == [.pairing(.request)])
        #expect(machine.state == .stranger(hello, pairing: true))
        #expect(machine.received(.pairing(.confirm)) == [.pairing(.confirm)])
        #expect(machine.admit(invitation: invitation) == [.send(.invitation(invitation))])
        var admitted = LinkStateMachine(role: .acceptor)
        _ = admitted.received(.hello(hello))
        _ = admitted.admit(invitation: invitation)
        #expect(admitted.received(.pairing(.request)).last?.isClose == true, "pairing on a member's link")
    }

    @Test("an invitation from a dialer this side does not trust is declined with notTrusted, not a protocol error")
    func invitationFromAStranger() {
        for pairing in [false, true] {
            var machine = LinkStateMachine(role: .acceptor)
            _ = machine.received(.hello(hello))
            machine.handshake()
            machine.becomeStranger()
            if pairing { machine.startPairing() }
            #expect(
                machine.received(.invitation(invitation)) == [
                    .send(.decline(.notTrusted)), .close("an invitation from an untrusted device"),
                ])
            #expect(machine.isClosed)
        }
        var dialer = LinkStateMachine(role: .dialer)
        _ = dialer.received(.hello(hello))
        dialer.handshake()
        dialer.becomeStranger()
        #expect(
            dialer.received(.invitation(invitation)).first == .send(.bye(.protocolError)), "an acceptor's invitation")
    }

    @Test("a stranger's link closes with notTrusted after its timeout; a pairing under way has the longer one")
    func strangerDeadline() {
        var idle = LinkStateMachine(role: .acceptor)
        _ = idle.received(.hello(hello))
        idle.handshake()
        idle.becomeStranger()
        func tick(_ machine: inout LinkStateMachine, _ seconds: Int64) -> [LinkStateMachine.Action] {
            machine.tick(
                openFor: .seconds(seconds), proofTimeout: .seconds(3), handshakeTimeout: .seconds(32),
                strangerTimeout: .seconds(10), pairingTimeout: .seconds(120))
        }
        #expect(tick(&idle, 4).isEmpty, "the proof timeout does not apply to a stranger's link")
        #expect(tick(&idle, 9).isEmpty)
        #expect(tick(&idle, 11).first == .send(.decline(.notTrusted)))
        var pairing = LinkStateMachine(role: .acceptor)
        _ = pairing.received(.hello(hello))
        pairing.handshake()
        pairing.becomeStranger()
        pairing.startPairing()
        #expect(tick(&pairing, 60).isEmpty)
        #expect(tick(&pairing, 121).first == .send(.decline(.notTrusted)))
    }

    @Test("an unproven link closes after the proof timeout; a person deciding has the handshake timeout")
    func proofDeadline() {
        var machine = LinkStateMachine(role: .acceptor)
        _ = machine.received(.hello(hello))
        machine.handshake()
        #expect(machine.tick(openFor: .seconds(2), proofTimeout: .seconds(3), handshakeTimeout: .seconds(32)).isEmpty)
        #expect(
            machine.tick(openFor: .seconds(4), proofTimeout: .seconds(3), handshakeTimeout: .seconds(32))
                == [.close("handshake not proved within \(TimeAmount.seconds(3))")])
        #expect(machine.isClosed)
        var idle = LinkStateMachine(role: .acceptor)
        _ = idle.received(.hello(hello))
        _ = idle.admit(invitation: invitation)  // waiting for an invitation that never comes
        #expect(!idle.tick(openFor: .seconds(4), proofTimeout: .seconds(3), handshakeTimeout: .seconds(32)).isEmpty)
        var deciding = LinkStateMachine(role: .acceptor)
        _ = deciding.received(.hello(hello))
        _ = deciding.admit(invitation: invitation)
        _ = deciding.received(.invitation(invitation))
        #expect(deciding.tick(openFor: .seconds(20), proofTimeout: .seconds(3), handshakeTimeout: .seconds(32)).isEmpty)
    }
}

extension LinkStateMachine.Action {
    var isClose: Bool {
        if case .close = self { return true }
        return false
    }
}
