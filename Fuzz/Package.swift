// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for the frame decoders (wire-fuzz) and the Noise handshake, handshake payload and sealed decoders (link-fuzz), kept out of the product package.
// Built and run by `scripts/fuzz`, which adds `-sanitize=fuzzer,address` (libFuzzer supplies `main`).
let package = Package(
    name: "WireFuzz",
    dependencies: [
        .package(name: "LanSession", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        .executableTarget(
            name: "wire-fuzz",
            dependencies: [.product(name: "WireCodec", package: "LanSession")]
        ),
        .executableTarget(
            name: "link-fuzz",
            dependencies: [
                .product(name: "WireCodec", package: "LanSession"),
                .product(name: "LinkCrypto", package: "LanSession"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
