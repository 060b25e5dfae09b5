import CLinux

#if canImport(Glibc)
    import Glibc
#endif

// Texts for a person in the person's language: gettext's catalogs (docs/translating.md), one
// implementation for the client and the daemon. Machine output (--json, the protocol, the
// journal, --format's values) never goes through here.

/// gettext's domain: the catalogs are LOCALEDIR/<lang>/LC_MESSAGES/diligence.mo.
public let textDomain = "diligence"

/// Where the catalogs are: $DILIGENCE_LOCALEDIR; in a source tree `make mo`'s .build/locale; else
/// PREFIX/share/locale of the prefix the program is installed in (PREFIX/bin/diligenced).
public func localeDirectory(executable: String, environment: [String: String]) -> String {
    if let directory = environment["DILIGENCE_LOCALEDIR"], !directory.isEmpty { return directory }
    let parts = executable.split(separator: "/", omittingEmptySubsequences: false)
    if let build = parts.firstIndex(of: ".build") {
        return parts[...build].joined(separator: "/") + "/locale"
    }
    let bin = parts.dropLast().joined(separator: "/")
    let prefix = bin.hasSuffix("/bin") ? String(bin.dropLast("/bin".count)) : bin
    return prefix + "/share/locale"
}

/// Bound at the first translated text, once: `status --json` and the other machine paths never
/// open a catalog.
private let catalogBound: Bool = {
    let directory = localeDirectory(executable: ProcessEnvironment.executablePath, environment: ProcessEnvironment.current)
    clinux_bind_catalog(textDomain, directory)
    return true
}()

/// The environment's locale (LANG, LC_ALL, LC_MESSAGES), called by each program at its start
/// only: tests that run the client or the daemon in-process stay in the C locale's English.
public func useEnvironmentLocale() {
    clinux_use_environment_locale()
}

/// `msgid` in the person's language, its `{name}` placeholders replaced by `values`. `msgid` is
/// a literal (the extractor, .ci/extract-messages, reads it into po/diligence.pot).
public func tr(_ msgid: String, _ values: [String: String] = [:]) -> String {
    fill(translated(msgid), values)
}

/// The plural form for `count` (`{count}` is filled in with it): English's two, Chinese's one,
/// each language's own rule from its catalog's Plural-Forms.
public func trPlural(_ singular: String, _ plural: String, count: Int, _ values: [String: String] = [:]) -> String {
    _ = catalogBound
    // Without a translation gettext hands back its argument, a C string that lives only in the closure.
    let text = singular.withCString { one in
        plural.withCString { many in
            let found = clinux_ngettext(textDomain, one, many, UInt(max(0, count)))
            return found == one ? singular : found == many ? plural : found.map { String(cString: $0) } ?? plural
        }
    }
    return fill(text, values.merging(["count": String(count)]) { given, _ in given })
}

/// A text marked with `trNoop` where it was written (a table built before any text is shown),
/// translated where it is shown.
public func translated(_ msgid: String) -> String {
    guard !msgid.isEmpty else { return msgid }
    _ = catalogBound
    return msgid.withCString { text in
        let found = clinux_gettext(textDomain, text)
        return found == text ? msgid : found.map { String(cString: $0) } ?? msgid
    }
}

/// Replaces each `{name}` whose name `values` has; other braces (`{{`, `{task}` in --format's
/// help) stay as they are.
public func fill(_ text: String, _ values: [String: String]) -> String {
    guard !values.isEmpty, text.contains("{") else { return text }
    var out = ""
    var rest = Substring(text)
    while let open = rest.firstIndex(of: "{") {
        out += rest[..<open]
        let after = rest[rest.index(after: open)...]
        if let close = after.firstIndex(of: "}"), let value = values[String(after[..<close])] {
            out += value
            rest = after[after.index(after: close)...]
        } else {
            out += "{"
            rest = after
        }
    }
    return out + rest
}

/// Marks a literal for the catalogs (po/diligence.pot) where a table is written; the client
/// translates it where it shows it (gettext's N_): the table itself stays English.
@inlinable public func trNoop(_ msgid: String) -> String { msgid }
