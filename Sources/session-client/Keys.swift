/// A key press the live view understands.
enum Key: Equatable {
    case up
    case down
    case left
    case right
    /// Picks up or drops the selected bubble.
    case space
    /// Selects the next bubble.
    case tab
    /// Selects bubble number `index` (from 0) in the list.
    case select(Int)
    case quit
    /// Anything else: ignored.
    case other

    /// Takes the complete keys off the front of `bytes`; an unfinished escape sequence stays for the next read.
    static func take(from bytes: inout [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        scan: while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3, 4:
                keys.append(.quit)
            case UInt8(ascii: " "):
                keys.append(.space)
            case 9:
                keys.append(.tab)
            case UInt8(ascii: "1")...UInt8(ascii: "9"):
                keys.append(.select(Int(byte - UInt8(ascii: "1"))))
            case 0x1B:
                guard let (key, length) = escape(bytes[index...]) else { break scan }
                keys.append(key)
                index += length
                continue scan
            default:
                keys.append(.other)
            }
            index += 1
        }
        bytes.removeFirst(index)
        return keys
    }

    /// The key of the escape sequence at the front of `bytes` and its length; nil while it is unfinished.
    private static func escape(_ bytes: ArraySlice<UInt8>) -> (Key, Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let introducer = bytes[start + 1]
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else { return (.other, 1) }
        // CSI and SS3 sequences end with a byte in 0x40...0x7E; parameters come before it.
        var index = start + 2
        while index < bytes.endIndex {
            let byte = bytes[index]
            if (0x40...0x7E).contains(byte) {
                let length = index - start + 1
                switch byte {
                case UInt8(ascii: "A"): return (.up, length)
                case UInt8(ascii: "B"): return (.down, length)
                case UInt8(ascii: "C"): return (.right, length)
                case UInt8(ascii: "D"): return (.left, length)
                default: return (.other, length)
                }
            }
            index += 1
        }
        return nil
    }
}
