import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// The real servers the focus tests use run here, and their do-not-disturb state is read back
// the way their users read it.
extension EndToEnd {
    @Suite("Focus: the notification servers of the focus tests", .serialized)
    struct FocusServers {
        @Test(
            "mako under headless sway: makoctl adds and removes the do-not-disturb mode",
            .enabled(if: WaylandDesktop.unavailable(.mako) == nil))
        func mako() throws {
            let desktop = try WaylandDesktop(.mako)
            #expect(desktop.makoModes == ["default"])
            _ = desktop.run(["/usr/bin/makoctl", "mode", "-a", "do-not-disturb"])
            #expect(desktop.makoModes == ["default", "do-not-disturb"])
        }

        @Test("swaync under headless sway: its GetDnd/SetDnd hold with dconf", .enabled(if: WaylandDesktop.unavailable(.swaync) == nil))
        func swaync() throws {
            let desktop = try WaylandDesktop(.swaync)
            #expect(desktop.swayncDND == false)
            _ = desktop.run(["/usr/bin/swaync-client", "--dnd-on"])
            #expect(desktop.swayncDND == true)
        }

        @Test("GNOME's show-banners in a real dconf, read back with gsettings", .enabled(if: GnomeSettings.unavailable == nil))
        func gnome() throws {
            let root = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: "focus-gnome")
            defer { try? FileManager.default.removeItem(atPath: root) }
            let bus = try SessionBus(directory: root)
            let settings = try GnomeSettings(directory: root, busAddress: bus.address, configHome: root + "/config", runtimeDirectory: root)
            #expect(settings.showBanners == true)
            try settings.setShowBanners(false)
            #expect(settings.showBanners == false)
            withExtendedLifetime((bus, settings)) {}
        }
    }
}
