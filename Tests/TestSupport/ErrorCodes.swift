import DiligenceCore

/// The error code a throwing call fails with, or nil when it does not throw.
/// (Untyped `throws`: closures inside `#expect` do not infer a typed error.)
public func errorCode<T>(_ body: () throws -> T) -> String? {
    do {
        _ = try body()
        return nil
    } catch let error as DiligenceError {
        return error.code
    } catch {
        return "not a DiligenceError: \(error)"
    }
}
