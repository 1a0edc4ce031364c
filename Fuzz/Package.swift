// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for the frame decoders (wire-fuzz) and the secret handshake and sealed decoders (link-fuzz), kept out of the product package.
// Built and run by `scripts/fuzz`, which adds `-sanitize=fuzzer,address` (libFuzzer supplies `main`).
let package = Package(
    name: "WireFuzz",
    dependencies: [.package(name: "LanSession", path: "..")],
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
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
