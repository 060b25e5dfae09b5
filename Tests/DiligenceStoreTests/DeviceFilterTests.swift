import DiligenceCore
import DiligenceStore
import Testing

/// `--device` as people type it (docs/sync.md, "Reports by device"): this, a name, an id's beginning.
@Suite struct DeviceFilterTests {
    static let own = KnownDevice(id: "aaaa1111-0000-4000-8000-000000000001", name: "laptop", isThis: true)
    static let desk = KnownDevice(id: "bbbb2222-0000-4000-8000-000000000002", name: "Schreibtisch", isThis: false)
    static let cafe = KnownDevice(id: "bbbb3333-0000-4000-8000-000000000003", name: "cafe", isThis: false)
    static let unnamed = KnownDevice(id: "cccc4444-0000-4000-8000-000000000004", name: nil, isThis: false)
    static let devices = [own, desk, cafe, unnamed]

    func resolve(_ text: String, _ devices: [KnownDevice] = devices) throws -> DeviceFilter {
        try DeviceFilter.resolve(text, among: { devices })
    }

    func failure(_ text: String, _ devices: [KnownDevice] = devices) -> DiligenceError? {
        do {
            _ = try DeviceFilter.resolve(text, among: { devices })
            return nil
        } catch {
            return error
        }
    }

    @Test("this needs no list of the devices (reading it costs a pass over the sessions)")
    func thisAsksForNoList() throws {
        let filter = try DeviceFilter.resolve("This") { () throws(DiligenceError) -> [KnownDevice] in
            throw DiligenceError(.storageError, "the device list was read")
        }
        #expect(filter == .this)
    }

    @Test("this, this device's name or id: this device's own sessions")
    func thisDevice() throws {
        #expect(try resolve("THIS") == .this)
        #expect(try resolve("Laptop") == .this)
        #expect(try resolve("aaaa") == .this)
    }

    @Test("a name in any case, normalized like a task name; else an id's unique beginning in any case")
    func nameThenID() throws {
        #expect(try resolve("schreibtisch") == .other(Self.desk.id))
        #expect(try resolve("  SCHREIBTISCH ") == .other(Self.desk.id))
        #expect(try resolve("CCCC4444") == .other(Self.unnamed.id))
        #expect(try resolve("bbbb2") == .other(Self.desk.id))
        // A name that reads as hexadecimal is the name first.
        #expect(try resolve("cafe") == .other(Self.cafe.id))
    }

    @Test("a name two devices have, or a beginning of several ids, is ambiguous and lists them")
    func ambiguous() {
        let twin = KnownDevice(id: "dddd5555-0000-4000-8000-000000000005", name: "LAPTOP", isThis: false)
        let byName = failure("laptop", Self.devices + [twin])
        #expect(byName?.code.rawValue == "ambiguous_device")
        #expect(byName?.message.contains("aaaa1111 (laptop)") == true && byName?.message.contains("dddd5555 (LAPTOP)") == true)
        let byID = failure("bbbb")
        #expect(
            byID?.code.rawValue == "ambiguous_device" && byID?.message.contains("bbbb3333 (cafe)") == true, "\(String(describing: byID))")
    }

    @Test("nothing that matches is unknown, and the message lists every device known, this one first")
    func unknown() {
        let error = failure("kitchen")
        #expect(error?.code.rawValue == "unknown_device")
        let message = error?.message ?? ""
        #expect(message.contains("aaaa1111 (laptop) this device, bbbb2222 (Schreibtisch)") && message.contains("cccc4444"), "\(message)")
        #expect(failure("")?.code.rawValue == "unknown_device")
    }
}
