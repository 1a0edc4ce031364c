// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "LanSession",
    products: [
        .library(name: "WireCodec", targets: ["WireCodec"]),
        .library(name: "AvahiDiscovery", targets: ["AvahiDiscovery"]),
        .library(name: "LanSession", targets: ["LanSession"]),
        .executable(name: "sessiond", targets: ["sessiond"]),
        .executable(name: "session-client", targets: ["session-client"]),
    ],
    dependencies: [
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1")
    ],
    targets: [
        // The binary codec every other layer speaks. Dependency-free on purpose.
        .target(name: "WireCodec"),
        // mDNS/DNS-SD through the Avahi daemon.
        .target(name: "AvahiDiscovery"),
        // Sessions, links and channels.
        .target(name: "LanSession", dependencies: ["WireCodec", "AvahiDiscovery"]),
        .executableTarget(name: "sessiond", dependencies: ["LanSession"]),
        .executableTarget(name: "session-client", dependencies: ["LanSession"]),
        .testTarget(
            name: "WireCodecTests",
            dependencies: [
                "WireCodec",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "LanSessionTests", dependencies: ["LanSession"]),
    ],
    swiftLanguageModes: [.v6]
)
