/// Marks a literal for the catalogs (po/diligence.pot) where a table is written; the client
/// translates it where it shows it (gettext's N_): the table itself stays English.
@inlinable public func trNoop(_ msgid: String) -> String { msgid }
