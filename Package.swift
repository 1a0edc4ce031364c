// swift-tools-version:6.1
import PackageDescription

#if canImport(Glibc)
    import Glibc
#endif

/// scripts/package builds a package of a version other than the tree's (a snapshot, or the second build of an upgrade
/// check) with LANSESSION_VERSION set: it is compiled into CLanSessionVersion alone, so that `--version` and `status`
/// agree with the package's version. Debian's version characters only.
let packageVersionSettings: [CSetting] = {
    guard let pointer = getenv("LANSESSION_VERSION") else { return [] }
    let version = String(cString: pointer)
    let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+~-")
    guard !version.isEmpty, version.allSatisfy(allowed.contains) else {
        fatalError("LANSESSION_VERSION=\(version) is not a Debian upstream version")
    }
    return [.define("LANSESSION_VERSION", to: "\"\(version)\"")]
}()

let package = Package(
    name: "LanSession",
    products: [
        .library(name: "WireCodec", targets: ["WireCodec"]),
        .library(name: "LinkCrypto", targets: ["LinkCrypto"]),
        .library(name: "AvahiDiscovery", targets: ["AvahiDiscovery"]),
        .library(name: "LanSession", targets: ["LanSession"]),
        .library(name: "LanSessionDiscovery", targets: ["LanSessionDiscovery"]),
        .library(name: "LanSessionRFCOMM", targets: ["LanSessionRFCOMM"]),
        .library(name: "LanSessionLE", targets: ["LanSessionLE"]),
        .library(name: "LanSessionBlueZ", targets: ["LanSessionBlueZ"]),
        .library(name: "DBusClient", targets: ["DBusClient"]),
        .library(name: "BubblesAndCounter", targets: ["BubblesAndCounter"]),
        .library(name: "BubblesAndCounterGATT", targets: ["BubblesAndCounterGATT"]),
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
        // `swift package generate-documentation --target LanSession`: the library's DocC documentation.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
        // BlueZ's headers and libbluetooth, used only by LanSessionRFCOMM.
        .systemLibrary(
            name: "CBluetooth",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        // libsystemd's sd-bus, wrapped only by DBusClient.
        .systemLibrary(
            name: "CSystemdBus",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // OpenSSL's libcrypto, used only by LinkCrypto for the records' ChaCha20-Poly1305 and AES-256-GCM.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Whether the CPU has AES instructions (CPUID, or the kernel's HWCAP), read only by LinkCrypto's CPUFeatures.
        .systemLibrary(name: "CCPUFeatures"),
        // The C library's statfs(2) and the kernel's file system magic numbers (which file systems live in memory),
        // used only by sessiond's state store.
        .systemLibrary(name: "CFileSystem"),
        // The C library's malloc_trim(3), used only by sessiond's MemoryTrimmer.
        .systemLibrary(name: "CMalloc"),
        // The Noise handshake (XX, XXpsk3) on swift-crypto, and the sealing of links on libcrypto; no I/O.
        .target(
            name: "LinkCrypto",
            dependencies: [
                "WireCodec", "COpenSSL", "CCPUFeatures", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // mDNS/DNS-SD through the Avahi daemon.
        // A D-Bus client on sd-bus, on a thread of its own: calls, exported objects, signals.
        .target(
            name: "DBusClient",
            dependencies: ["CSystemdBus", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "AvahiDiscovery",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")]
        ),
        // The core: sessions, links and channels on the LAN transport; applications plug in through its public
        // SessionApplication. No Avahi and no BlueZ: discovery and Bluetooth are the add-ons below.
        .target(
            name: "LanSession",
            dependencies: [
                "WireCodec",
                "LinkCrypto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Finds the peers of a session with DNS-SD through avahi-daemon.
        .target(
            name: "LanSessionDiscovery",
            dependencies: [
                "LanSession", "AvahiDiscovery", "WireCodec", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Bluetooth classic (RFCOMM) as a transport of the session, and what the Bluetooth transports share.
        .target(
            name: "LanSessionRFCOMM",
            dependencies: [
                "LanSession", "CBluetooth", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Bluetooth Low Energy (L2CAP connection-oriented channels) as a transport of the session.
        .target(
            name: "LanSessionLE",
            dependencies: [
                "LanSession", "LanSessionRFCOMM", "WireCodec", "CBluetooth",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Bluetooth through bluetoothd's D-Bus API where it runs: the GATT face, the RFCOMM service record.
        .target(
            name: "LanSessionBlueZ",
            dependencies: [
                "DBusClient", "LanSession", "LanSessionLE", "WireCodec",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The original apps (a counter, three bubbles, player indexes) as one application of a session, with the
        // codec of their messages.
        .target(
            name: "BubblesAndCounter",
            dependencies: [
                "LanSession", "WireCodec", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The original apps' commands and events on the LE GATT face.
        .target(
            name: "BubblesAndCounterGATT",
            dependencies: ["BubblesAndCounter", "LanSession", "LanSessionLE", "WireCodec"]
        ),
        // The release both tools report: the tree's own, or the one scripts/package builds (LANSESSION_VERSION).
        .target(name: "CLanSessionVersion", cSettings: packageVersionSettings),
        // The control socket's protocol between sessiond and session-client (docs/control-protocol.md).
        .target(name: "SessionControl", dependencies: ["CLanSessionVersion"]),
        .executableTarget(
            name: "sessiond",
            dependencies: [
                "LanSession",
                "LanSessionDiscovery",
                "LanSessionRFCOMM",
                "LanSessionLE",
                "LanSessionBlueZ",
                "DBusClient",
                "BubblesAndCounter",
                "BubblesAndCounterGATT",
                "SessionControl",
                "CFileSystem",
                "CMalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            // The page's files, embedded by scripts/embed-page into Generated/PageAssets.swift.
            exclude: ["Page"]
        ),
        .executableTarget(
            name: "session-client",
            dependencies: [
                "SessionControl",
                "WireCodec",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "WireCodecTests",
            dependencies: [
                "WireCodec", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "DBusClientTests",
            dependencies: ["DBusClient", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "LanSessionBlueZTests",
            dependencies: [
                "LanSessionBlueZ", "LanSessionLE", "DBusClient", "WireCodec", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LinkCryptoTests",
            dependencies: ["LinkCrypto", "WireCodec", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "LanSessionTests",
            dependencies: [
                "LanSession",
                "LinkCrypto",
                "WireCodec",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "LanSessionDiscoveryTests",
            dependencies: ["LanSessionDiscovery", "LanSession", "AvahiDiscovery", "WireCodec"]
        ),
        .testTarget(name: "LanSessionRFCOMMTests", dependencies: ["LanSessionRFCOMM", "LanSession"]),
        .testTarget(
            name: "LanSessionLETests",
            dependencies: [
                "LanSessionLE", "LanSession", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "BubblesAndCounterTests",
            dependencies: [
                "BubblesAndCounter", "BubblesAndCounterGATT", "LanSessionLE", "LanSession", "WireCodec", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
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
        // Labs of test hosts: network namespaces on a bridge, each with its own D-Bus and avahi-daemon; their
        // layout, the steps that make and remove them, their state (scripts/testnet, TestSupport's TestLab).
        .target(name: "TestHosts", path: "Tests/TestHosts"),
        // scripts/testnet's program: up, exec, pid, addr, avahi, down, list.
        .executableTarget(
            name: "lansession-testnet",
            dependencies: ["TestHosts", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tests/TestNet"
        ),
        // The lab's layout and scripts/testnet's arguments, without root.
        .testTarget(name: "TestHostsTests", dependencies: ["TestHosts", "lansession-testnet"]),
        // What tests share: test hosts (network namespaces with their own avahi-daemon, TestHosts) and
        // processes in them, sessions on loopback, raw peers, recorders, waiting, a seeded generator.
        .target(
            name: "TestSupport",
            dependencies: [
                "LanSession", "WireCodec", "DBusClient", "TestHosts", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "AvahiDiscoveryTests",
            dependencies: ["AvahiDiscovery", "TestSupport"]
        ),
        // Faults on test hosts while every host counts (scripts/chaos).
        .executableTarget(
            name: "lansession-chaos",
            dependencies: [
                "TestSupport", "SessionControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/Chaos"
        ),
        // Checks and measurements inside the Bluetooth lab's VM (scripts/btlab).
        .executableTarget(
            name: "lansession-btlab",
            dependencies: [
                "LanSession", "LanSessionRFCOMM", "CBluetooth", "TestSupport", "SessionControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/BluetoothLab",
            // The lab's independent central (bleak) and its stand-in peripheral, run by the checks.
            exclude: ["gatt_central.py", "gatt_peripheral.py"]
        ),
        // sessiond's parts on embedded channels and loops: the control connections' handlers, the event hub; and
        // session-client's arguments.
        .testTarget(
            name: "SessiondTests",
            dependencies: [
                "sessiond", "session-client", "SessionControl", "LanSession", "BubblesAndCounter",
                "BubblesAndCounterGATT", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // sessiond and session-client, the real binaries, on test hosts.
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "SessionControl"]),
    ],
    swiftLanguageModes: [.v6]
)
