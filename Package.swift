// swift-tools-version:6.0
import PackageDescription

// Layout (see docs/architecture.md):
//   DiligenceTime      every date rule: calendar days, RFC 3339, local days under day_starts_at,
//                      dates and times as people type them. Used by every module and the client.
//   DiligenceCore      pure logic: tasks and their JSON, durations, the timer machine. No I/O, no clock.
//   DiligenceJSON      the JSON value, its parser and printer: the wire's and the store's.
//   DiligenceProtocol  requests/responses, the command schema, socket paths: shared by daemon and client.
//   DiligenceStore     SQLite: schema, tasks, sessions, the saved timer (kept as JSON).
//   DiligenceSync      per-device journals in a sync folder: line format, clock, merge rule, reader,
//                      and the one way to open a file another hand can put in place.
//   DiligenceDaemon    the I/O shell: control server, timer driver, systemd glue.
//   DiligenceClient    the command-line client: arguments, requests, reports and pictures.
//   diligenced         the one program: Daemon.main, or the client when run as diligencectl.
//   diligencectl       the client's executable for the build tree (installed, a link to diligenced).
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
        .target(name: "DiligenceCore", dependencies: ["DiligenceJSON", "DiligenceTime"], linkerSettings: [.linkedLibrary("m")]),
        // Linux headers the Glibc module leaves out (signalfd).
        .systemLibrary(name: "CLinux"),
        // VERSION (a link to the package's VERSION, which `make deb` reads too) is compiled in:
        // ProtocolInfo.release.
        // JSON on its own (no Foundation): the protocol and the store both speak it.
        .target(name: "DiligenceJSON"),
        // CLinux: gettext (dcgettext, dcngettext), the client's and the daemon's texts in the
        // person's language (Translatable.swift).
        .target(
            name: "DiligenceProtocol", dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceTime", "CLinux"],
            resources: [.embedInCode("VERSION")]),
        .target(name: "DiligenceStore", dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceSync", "DiligenceTime", "CSQLite"]),
        // Per-device journals in a sync folder: the line format, the hybrid logical clock, the
        // merge rule and the reader (docs/sync.md). Pure but for reading journal files.
        .target(name: "DiligenceSync", dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceTime"]),
        .target(
            name: "DiligenceDaemon",
            dependencies: [
                "DiligenceCore", "DiligenceJSON", "DiligenceProtocol", "DiligenceStore", "DiligenceSync", "DiligenceTime", "CSystemd",
                "CLinux",
            ]
        ),
        .target(name: "DiligenceClient", dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceProtocol", "DiligenceTime", "CLinux"]),
        .executableTarget(name: "diligenced", dependencies: ["DiligenceClient", "DiligenceDaemon"]),
        .executableTarget(name: "diligencectl", dependencies: ["DiligenceClient"]),
        // One test kit (TestSupport): time zones, temporary directories, waiting, and one API for
        // the in-process and the live daemon (ControlledDaemon).
        .target(
            name: "DiligenceTestSupport",
            dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceProtocol", "DiligenceSync", "DiligenceTime"],
            path: "Tests/TestSupport"),
        .testTarget(name: "DiligenceTimeTests", dependencies: ["DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceJSONTests", dependencies: ["DiligenceJSON", "DiligenceTestSupport"]),
        .testTarget(name: "DiligenceCoreTests", dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(
            name: "DiligenceProtocolTests",
            dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceProtocol", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(
            name: "DiligenceStoreTests",
            dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceStore", "DiligenceSync", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(
            name: "DiligenceSyncTests",
            dependencies: ["DiligenceCore", "DiligenceJSON", "DiligenceSync", "DiligenceTime", "DiligenceTestSupport"]),
        .testTarget(
            name: "DiligenceDaemonTests",
            dependencies: [
                "DiligenceCore", "DiligenceDaemon", "DiligenceJSON", "DiligenceProtocol", "DiligenceStore", "DiligenceTime",
                "DiligenceTestSupport",
            ]),
        // CSystemd: the end-to-end tests run a notification server of their own on a real session bus.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "DiligenceCore", "DiligenceJSON", "DiligenceProtocol", "DiligenceSync", "DiligenceTime", "DiligenceTestSupport", "CSystemd",
            ],
            // The translated golden files (TranslationTests), read from the source tree.
            exclude: ["Translations"]),
        .testTarget(
            name: "DiligencectlTests",
            dependencies: ["DiligenceClient", "DiligenceCore", "DiligenceJSON", "DiligenceProtocol", "DiligenceTestSupport"],
            // Golden files, read from the source tree (PictureTests), not bundled.
            exclude: ["Pictures"]),
    ],
    swiftLanguageModes: [.v6]
)
