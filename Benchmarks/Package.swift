// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "LanSessionBenchmarks",
    dependencies: [
        // Named so that the product reference below does not depend on the name of the checkout's directory.
        .package(name: "LanSession", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // scripts/bench: every benchmark as a subcommand of one tool, in-process on loopback or driving the anchors'
        // own programs and release sessiond on test hosts.
        .executableTarget(
            name: "lansession-bench",
            dependencies: [
                "CodecBenchmark", "SessionBenchmark", "TransferBenchmark", "ThroughputBenchmark", "PageBenchmark",
                .product(name: "SessionControl", package: "LanSession"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Compares WireCodec's encoded size and speed (with BubblesAndCounter's codec for the apps' messages) with
        // protobuf, JSON, plists and keyed archives.
        .target(
            name: "CodecBenchmark",
            dependencies: [
                .product(name: "WireCodec", package: "LanSession"),
                .product(name: "BubblesAndCounter", package: "LanSession"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // Round-trip latency of sessions on loopback next to plain SwiftNIO TCP and UDP ping-pong.
        .target(
            name: "SessionBenchmark",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(name: "LinkCrypto", package: "LanSession"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Throughput of a resource transfer between sessions next to a raw TCP copy, and latency meanwhile.
        .target(
            name: "TransferBenchmark",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Increments and data messages per second over one reliable link next to plain SwiftNIO TCP, and next to
        // TLS 1.3 over SwiftNIO for sealed messages.
        .target(
            name: "ThroughputBenchmark",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(name: "BubblesAndCounter", package: "LanSession"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // What open pages cost sessiond: N pages while one drags at 60 Hz and one floods moves.
        .target(
            name: "PageBenchmark",
            dependencies: [
                .product(name: "SessionControl", package: "LanSession"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
