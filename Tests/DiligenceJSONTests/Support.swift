import DiligenceJSON

// MARK: Test helpers, written once

/// The error code `JSON.parse` fails with, or nil when the text parses.
func jsonErrorCode(_ bytes: [UInt8]) -> String? {
    do {
        _ = try JSON.parse(bytes)
        return nil
    } catch {
        return error.code.rawValue
    }
}

func jsonErrorCode(_ text: String) -> String? { jsonErrorCode(Array(text.utf8)) }
