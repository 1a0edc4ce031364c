// swift-tools-version:6.1
import PackageDescription

// Applications built on LanSession the way others would build them: this package depends on LanSession by path and
// imports its products only.
// - chat: messages and files between machines; with the Discovery trait (on by default) it finds peers with mDNS
//   through LanSessionDiscovery, without it (`--disable-default-traits`) it needs LanSession alone: no Avahi headers,
//   no libavahi-client.
// - status-board: an application of its own inside a session (SessionApplication), with its own messages.
// - readme-messages, readme-application: README's two library examples, as README prints them (a unit test of the
//   main package checks that README shows them line for line); the first needs the Discovery trait (empty without).
let package = Package(
    name: "LanSessionExamples",
    traits: [
        .default(enabledTraits: ["Discovery"]),
        .trait(name: "Discovery", description: "Find peers with mDNS through avahi-daemon (LanSessionDiscovery)."),
    ],
    dependencies: [
        .package(name: "LanSession", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "chat",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(
                    name: "LanSessionDiscovery", package: "LanSession", condition: .when(traits: ["Discovery"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/Chat"
        ),
        .executableTarget(
            name: "status-board",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(name: "WireCodec", package: "LanSession"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/StatusBoard"
        ),
        .executableTarget(
            name: "readme-messages",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(
                    name: "LanSessionDiscovery", package: "LanSession", condition: .when(traits: ["Discovery"])),
            ],
            path: "Sources/Readme/Messages"
        ),
        .executableTarget(
            name: "readme-application",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(name: "WireCodec", package: "LanSession"),
            ],
            path: "Sources/Readme/Application"
        ),
    ],
    swiftLanguageModes: [.v6]
)
