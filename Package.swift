// swift-tools-version:6.0
import PackageDescription

// Layout (see docs/architecture.md):
//   DiligenceTime      every date rule: calendar days, RFC 3339, local days under day_starts_at,
//                      dates and times as people type them. Used by every module and the client.
//   DiligenceCore      pure logic: tasks, durations, the timer state machine. No I/O, no clock.
//   DiligenceProtocol  JSON, requests/responses, socket paths: shared by daemon and client.
//   DiligenceStore     SQLite: schema, tasks, sessions, the saved timer (kept as the protocol's JSON).
//   DiligenceSync      per-device journals in a sync folder: line format, clock, merge rule, reader.
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
        // The one home of date rules (docs/architecture.md, "Dates"); Glibc only, no Foundation.
        .target(name: "DiligenceTime"),
        // Rounding in the core calls libm; nothing else links it without Glibc.
        .target(name: "DiligenceCore", dependencies: ["DiligenceTime"], linkerSettings: [.linkedLibrary("m")]),
        // Linux headers the Glibc module leaves out (signalfd).
        .systemLibrary(name: "CLinux"),
        // VERSION (a link to the package's VERSION, which `make deb` reads too) is compiled in:
        // ProtocolInfo.release.
        .target(name: "DiligenceProtocol", dependencies: ["DiligenceCore", "DiligenceTime"], resources: [.embedInCode("VERSION")]),
        .target(name: "DiligenceStore", dependencies: ["DiligenceCore", "DiligenceProtocol", "DiligenceSync", "DiligenceTime", "CSQLite"]),
        // Per-device journals in a sync folder: the line format, the hybrid logical clock, the
        // merge rule and the reader (docs/sync.md). Pure but for reading journal files.
        .target(name: "DiligenceSync", dependencies: ["DiligenceCore", "DiligenceProtocol", "DiligenceTime"]),
        .target(
            name: "DiligenceDaemon",
            dependencies: ["DiligenceCore", "DiligenceProtocol", "DiligenceStore", "DiligenceSync", "DiligenceTime", "CSystemd", "CLinux"]
        ),
        .executableTarget(name: "diligenced", dependencies: ["DiligenceDaemon"]),
        .executableTarget(name: "diligencectl", dependencies: ["DiligenceProtocol", "DiligenceTime"]),
        // Helpers shared by the test targets (time zones, temporary directories), written once.
        .target(name: "DiligenceTestSupport", dependencies: ["DiligenceCore", "DiligenceSync"], path: "Tests/TestSupport"),
        .testTarget(name: "DiligenceTimeTests", dependencies: ["DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceCoreTests", dependencies: ["DiligenceCore", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceProtocolTests", dependencies: ["DiligenceProtocol", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(
            name: "DiligenceStoreTests", dependencies: ["DiligenceStore", "DiligenceProtocol", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceSyncTests", dependencies: ["DiligenceSync", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceDaemonTests", dependencies: ["DiligenceDaemon", "DiligenceTime", "DiligenceTestSupport"]),
        // CSystemd: the end-to-end tests run a notification server of their own on a real session bus.
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["DiligenceProtocol", "DiligenceSync", "DiligenceTime", "DiligenceTestSupport", "CSystemd"]),
        .testTarget(name: "DiligencectlTests", dependencies: ["diligencectl", "DiligenceTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
