import WireCodec

/// Feeds one input to every decoder and checks what they promise.
///
/// - The stream decoder, given the input in two chunks, yields the same messages as given it whole.
/// - Every decoded message re-encodes to exactly the bytes it was decoded from (the encoding is canonical).
/// - The datagram decoder never traps.
/// A broken promise traps, which libFuzzer reports as a crash with the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let limits = WireLimits(maxFrameLength: 4096)

    // Whole input, frame by frame, checking canonical re-encoding.
    var whole: [Message] = []
    var offset = 0
    while offset < input.count {
        let rest = UnsafeRawBufferPointer(rebasing: input[offset...])
        guard let frame = try? StreamFraming.decodeFrame(rest, limits: limits) else { break }
        let reencoded = try! StreamFraming.encode(frame.message, limits: limits)
        precondition(reencoded.elementsEqual(rest.prefix(frame.length)), "re-encoding differs from the input")
        whole.append(frame.message)
        offset += frame.length
    }

    // The same bytes through the streaming decoder, split where the first byte says.
    var decoder = StreamDecoder(limits: limits)
    let split = size == 0 ? 0 : Int(input[0]) % (size + 1)
    var streamed: [Message] = []
    for chunk in [input[..<split], input[split...]] {
        decoder.append(UnsafeRawBufferPointer(rebasing: chunk))
        while let message = try? decoder.next() { streamed.append(message) }
    }
    precondition(streamed == whole, "chunked decoding differs from whole decoding")

    // Datagrams: must decode or fail with a code, and re-encode canonically when they decode.
    if let datagram = try? Datagram.decode(input) {
        let reencoded = try! datagram.encode()
        precondition(reencoded.elementsEqual(input), "datagram re-encoding differs from the input")
    }
    return 0
}
