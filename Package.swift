// swift-tools-version:6.0
import PackageDescription

// Layout (see docs/architecture.md):
//   DiligenceCore      pure logic: tasks, durations, the timer state machine. No I/O, no clock.
//   DiligenceProtocol  JSON, requests/responses, socket paths, dates: shared by daemon and client.
//   DiligenceStore     SQLite: schema, tasks, sessions, the saved timer (kept as the protocol's JSON).
//   DiligenceDaemon    the I/O shell: control server, timer driver, systemd glue.
//   diligenced / diligencectl  thin executables.
let package = Package(
    name: "diligence",
    products: [
        .executable(name: "diligenced", targets: ["diligenced"]),
        .executable(name: "diligencectl", targets: ["diligencectl"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Rounding in the core calls libm; nothing else links it without Glibc.
        .target(name: "DiligenceCore", linkerSettings: [.linkedLibrary("m")]),
        // Linux headers the Glibc module leaves out (signalfd).
        .systemLibrary(name: "CLinux"),
        .target(name: "DiligenceProtocol", dependencies: ["DiligenceCore"]),
        .target(name: "DiligenceStore", dependencies: ["DiligenceCore", "DiligenceProtocol", "CSQLite"]),
        .target(
            name: "DiligenceDaemon",
            dependencies: ["DiligenceCore", "DiligenceProtocol", "DiligenceStore", "CSystemd", "CLinux"]
        ),
        .executableTarget(name: "diligenced", dependencies: ["DiligenceDaemon"]),
        .executableTarget(name: "diligencectl", dependencies: ["DiligenceProtocol"]),
        // Helpers shared by the test targets (time zones, temporary directories), written once.
        .target(name: "DiligenceTestSupport", dependencies: ["DiligenceCore"], path: "Tests/TestSupport"),
        .testTarget(name: "DiligenceCoreTests", dependencies: ["DiligenceCore", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceProtocolTests", dependencies: ["DiligenceProtocol", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceStoreTests", dependencies: ["DiligenceStore", "DiligenceProtocol", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceDaemonTests", dependencies: ["DiligenceDaemon", "DiligenceTestSupport"]),
        // CSystemd: the end-to-end tests run a notification server of their own on a real session bus.
        .testTarget(name: "EndToEndTests", dependencies: ["DiligenceProtocol", "DiligenceTestSupport", "CSystemd"]),
        .testTarget(name: "DiligencectlTests", dependencies: ["diligencectl", "DiligenceTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
