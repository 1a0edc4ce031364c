// swift-tools-version:6.1
import PackageDescription

// A libFuzzer target for the frame decoders, kept out of the product package.
// Built and run by `scripts/fuzz`, which adds `-sanitize=fuzzer,address` (libFuzzer supplies `main`).
let package = Package(
    name: "WireFuzz",
    dependencies: [.package(name: "LanSession", path: "..")],
    targets: [
        .executableTarget(
            name: "wire-fuzz",
            dependencies: [.product(name: "WireCodec", package: "LanSession")]
        )
    ],
    swiftLanguageModes: [.v6]
)
