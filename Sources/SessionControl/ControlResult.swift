import Foundation

/// What a command's successful reply carries, typed: the `result` of `{"ok": true, "result": ...}`.
public enum ControlResult: Hashable, Sendable {
    case status(StatusResult)
    case peers([PeerResult])
    case increment(IncrementResult)
    case counter(CounterResult)
    case bubbles([BubbleResult])
    case invitations([InvitationResult])
    /// `accept`, `decline`.
    case answer(AnswerResult)
    /// `pickup`, `move`, `drop`, `unpair`, `cancel`: `{"done": true}`.
    case done
    case bench(BenchResult)
    case send(SendResult)
    /// `push`: each progress line and the last one.
    case transfer(TransferResult)
    case transfers([TransferResult])
    case stream(StreamResult)
    case pair(PairResult)
    case pairings([PairingResult])
    case devices([DeviceResult])
    case web(WebResult)
    /// `watch`: the run and the last event's number, the events coming after it.
    case watching(WatchResult)
    /// `streams`: `{}`, the stream reports coming after it.
    case subscribed
}

extension ControlResult: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .status(let result): try container.encode(result)
        case .peers(let result): try container.encode(result)
        case .increment(let result): try container.encode(result)
        case .counter(let result): try container.encode(result)
        case .bubbles(let result): try container.encode(result)
        case .invitations(let result): try container.encode(result)
        case .answer(let result): try container.encode(result)
        case .done: try container.encode(DoneResult())
        case .bench(let result): try container.encode(result)
        case .send(let result): try container.encode(result)
        case .transfer(let result): try container.encode(result)
        case .transfers(let result): try container.encode(result)
        case .stream(let result): try container.encode(result)
        case .pair(let result): try container.encode(result)
        case .pairings(let result): try container.encode(result)
        case .devices(let result): try container.encode(result)
        case .web(let result): try container.encode(result)
        case .watching(let result): try container.encode(result)
        case .subscribed: try container.encode([String: String]())
        }
    }
}

extension Result where Success == ControlResult, Failure == ControlError {
    /// The reply line (without its newline): `{"ok":true,"result":...}` or `{"ok":false,"error":"..."}`, the
    /// members in that order.
    public var replyLine: Data {
        let encoder = JSONEncoder()
        switch self {
        case .success(let result):
            guard let encoded = try? encoder.encode(result) else {
                return Data(#"{"ok":false,"error":"encoding"}"#.utf8)
            }
            return Data(#"{"ok":true,"result":"#.utf8) + encoded + Data("}".utf8)
        case .failure(let error):
            let message = (try? encoder.encode(error.message)) ?? Data(#""""#.utf8)
            return Data(#"{"ok":false,"error":"#.utf8) + message + Data("}".utf8)
        }
    }
}
