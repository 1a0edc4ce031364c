// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "LanSession",
    products: [
        .library(name: "WireCodec", targets: ["WireCodec"]),
        .library(name: "LinkCrypto", targets: ["LinkCrypto"]),
        .library(name: "AvahiDiscovery", targets: ["AvahiDiscovery"]),
        .library(name: "LanSession", targets: ["LanSession"]),
        .library(name: "SessionControl", targets: ["SessionControl"]),
        .executable(name: "sessiond", targets: ["sessiond"]),
        .executable(name: "session-client", targets: ["session-client"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // The binary codec every other layer speaks. Dependency-free on purpose.
        .target(name: "WireCodec"),
        // libavahi-client, wrapped only by AvahiDiscovery.
        .systemLibrary(
            name: "CAvahi",
            pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        // BlueZ's headers and libbluetooth, used only by the RFCOMM transport.
        .systemLibrary(
            name: "CBluetooth",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        // The secret handshake and the sealing of links, on swift-crypto; no I/O.
        .target(
            name: "LinkCrypto",
            dependencies: ["WireCodec", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // mDNS/DNS-SD through the Avahi daemon.
        .target(
            name: "AvahiDiscovery",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")]
        ),
        // Sessions, links and channels.
        .target(
            name: "LanSession",
            dependencies: [
                "WireCodec",
                "LinkCrypto",
                "AvahiDiscovery",
                "CBluetooth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The control socket's protocol between sessiond and session-client (docs/control-protocol.md).
        .target(name: "SessionControl"),
        .executableTarget(
            name: "sessiond",
            dependencies: [
                "LanSession",
                "SessionControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .executableTarget(
            name: "session-client",
            dependencies: [
                "SessionControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "WireCodecTests",
            dependencies: [
                "WireCodec",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "LinkCryptoTests", dependencies: ["LinkCrypto", "WireCodec"]),
        .testTarget(
            name: "LanSessionTests",
            dependencies: [
                "LanSession",
                "LinkCrypto",
                "AvahiDiscovery",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        // Publishes or browses from inside a test host; driven by AvahiDiscoveryTests.
        .executableTarget(
            name: "dnssd-probe",
            dependencies: [
                "AvahiDiscovery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/DNSSDProbe"
        ),
        // Creates and removes test hosts (network namespaces with their own avahi-daemon) through scripts/testnet.
        .target(name: "TestHostSupport", path: "Tests/TestHostSupport"),
        .testTarget(
            name: "AvahiDiscoveryTests",
            dependencies: ["AvahiDiscovery", "TestHostSupport"]
        ),
        // Faults on test hosts while every host counts (scripts/chaos).
        .executableTarget(
            name: "lansession-chaos",
            dependencies: [
                "TestHostSupport", "SessionControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/Chaos"
        ),
        // Checks and measurements inside the Bluetooth lab's VM (scripts/btlab).
        .executableTarget(
            name: "lansession-btlab",
            dependencies: [
                "LanSession", "CBluetooth", "TestHostSupport", "SessionControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/BluetoothLab"
        ),
        // sessiond and session-client, the real binaries, on test hosts.
        .testTarget(name: "EndToEndTests", dependencies: ["TestHostSupport", "SessionControl"]),
    ],
    swiftLanguageModes: [.v6]
)
