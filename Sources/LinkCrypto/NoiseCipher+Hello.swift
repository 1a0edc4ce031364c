import WireCodec

extension NoiseCipher {
    /// The hello extension that offers `ciphers`, in this order of preference.
    public static func helloExtension(offering ciphers: [NoiseCipher]) -> HelloExtension {
        .ciphers(ciphers.map(\.rawValue))
    }

    /// The ciphers `hello`'s sender takes, in its order of preference: those of its cipher list this release knows;
    /// ChaChaPoly alone when it lists none (an older release, or a malformed list).
    public static func taken(by hello: Hello) -> [NoiseCipher] {
        guard let listed = hello.ciphers else { return [.chaChaPoly] }
        return listed.compactMap(NoiseCipher.init(rawValue:))
    }

    /// The cipher of a link between the senders of two hellos, the same whichever comes first: AESGCM when both take
    /// it, else ChaChaPoly. Nil when one of them does not take that (a device limited to AESGCM, and a peer without
    /// it): the link is refused.
    public static func choice(between first: Hello, and second: Hello) -> NoiseCipher? {
        let (one, other) = (taken(by: first), taken(by: second))
        let choice: NoiseCipher = one.contains(.aesGCM) && other.contains(.aesGCM) ? .aesGCM : .chaChaPoly
        return one.contains(choice) && other.contains(choice) ? choice : nil
    }
}
