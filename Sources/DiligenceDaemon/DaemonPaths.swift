import DiligenceCore
import DiligenceProtocol

/// Where the daemon keeps its files: the command line's paths, else the defaults
/// (`SocketPath`, `DataPath`; docs/configuration.md).
public struct DaemonPaths: Sendable {
    public var socket: String
    public var database: String
    public var config: String
    /// The config path was given explicitly: then it must exist.
    public var configRequired: Bool

    public init(
        socket: String? = nil, database: String? = nil, config: String? = nil,
        environment: [String: String] = ProcessEnvironment.current
    ) {
        self.socket = socket ?? SocketPath.resolve(environment: environment)
        self.database = database ?? DataPath.database(environment: environment)
        self.config = config ?? DataPath.config(environment: environment)
        self.configRequired = config != nil
    }
}
