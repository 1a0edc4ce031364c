// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "LanSessionBenchmarks",
    dependencies: [
        // Named so that the product reference below does not depend on the name of the checkout's directory.
        .package(name: "LanSession", path: ".."),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
    ],
    targets: [
        // Compares WireCodec's encoded size and speed with protobuf, JSON, plists and keyed archives.
        .executableTarget(
            name: "codec-bench",
            dependencies: [
                .product(name: "WireCodec", package: "LanSession"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
