import AuditTrail
import ClientUpdater
import FleetReports
import Foundation
import TestSupport
import Testing

/// A real Chromium (headless, driven over the DevTools protocol with real mouse and
/// keyboard events) uses the console as an operator and a viewer would, and an attacker's
/// page on another port tries a cross-origin form.
///
/// What this relies on in Chromium: a form POST carries an `Origin` header (the Fetch
/// standard sets it on every request whose method is neither GET nor HEAD); cookies go with
/// requests to the same site whatever the port (127.0.0.1:A and 127.0.0.1:B are one site:
/// RFC 6265bis ignores ports), so `SameSite=Strict` alone would not stop the attacker's
/// form here and the Origin check must; and the page's Content-Security-Policy keeps any
/// script the page might carry from running (DevTools' own evaluation reads the DOM only).
@Suite(.serialized) struct ConsoleChromiumTests {
    @Test func anOperatorAndAViewerUseTheConsoleInChromium() async throws {
        let rig = try await ConsoleRig()
        let browser = try ChromiumDevTools()
        defer { browser.close() }

        // A device waits for admission; the message it kept holds a script.
        let hostile = "<script>document.title='owned'</script>"
        let device = try ConsoleRig.Device(0xC3)
        var report = FleetReport(seq: 1, time: Date().addingTimeInterval(-60), type: .pageErrors, running: "1.0.0")
        report.version = "1.0.0"
        report.count = 2
        report.ms = 3_600_000
        report.detail = hostile
        try await device.send([report], labels: ["site": "lobby"], to: rig.collector)

        // Log in with the keyboard and a click.
        let tab = try await browser.newTab()
        try await tab.navigate(rig.base + "/login")
        try await tab.type("#name", "alice")
        try await tab.type("#password", ConsoleRig.operatorPassword)
        try await tab.clickAndWait("button[data-act=login]")
        #expect(try await tab.url() == rig.base + "/")
        #expect(try await tab.evaluate("document.querySelector('[data-field=role]').textContent") as? String == "operator")

        // See the pending device with its label, admit it.
        try await tab.navigate(rig.base + "/devices")
        #expect(
            try await tab.evaluate("document.querySelector('tr[data-device=\"\(device.id)\"] [data-field=labels]').textContent") as? String
                == "site=lobby")
        try await tab.clickAndWait("button[data-act=admit][data-device=\"\(device.id)\"]")
        #expect(try await tab.url() == rig.base + "/devices?done=admit")
        #expect(try await tab.text().contains("No device is waiting."))

        // Its kept message renders as text: no script element, nothing ran.
        try await tab.navigate(rig.base + "/channel/stable")
        let kept = try await tab.evaluate("document.querySelector('[data-field=message]').textContent") as? String
        #expect(kept == hostile + " ×1", "\(kept ?? "none")")
        #expect(try await tab.evaluate("document.scripts.length") as? Int == 0)
        #expect(try await tab.evaluate("document.title") as? String != "owned")

        // Halt: the device's next check refuses the release.
        try await tab.clickAndWait("button[data-act=halt][data-channel=stable][data-version=\"1.1.0\"]")
        #expect(try await tab.url() == rig.base + "/channel/stable?done=halt")
        #expect(try rig.restriction()?.paused == true)
        let held = try await rig.d.updater().install()
        #expect(held.result == .skipped && held.message.contains("paused by the rollout role's restriction"), "\(held)")

        // The attacker's page on another 127.0.0.1 port: a form to the console with alice's
        // own CSRF token even; her cookie goes along (same site), the Origin does not match.
        let csrf = try await tab.evaluate("document.querySelector('input[name=csrf]').value") as? String ?? ""
        let basis = try await tab.evaluate("document.querySelector('input[name=basis]').value") as? String ?? ""
        let evil = try TemporaryDirectory("evil")
        try Data(
            """
            <!DOCTYPE html><html><body><form method="post" action="\(rig.base)/act/lift">
            <input type="hidden" name="csrf" value="\(csrf)"><input type="hidden" name="channel" value="stable">
            <input type="hidden" name="version" value="1.1.0"><input type="hidden" name="basis" value="\(basis)">
            <button id="go" type="submit">Win a prize</button></form></body></html>
            """.utf8
        ).write(to: URL(fileURLWithPath: evil("evil.html")))
        let attacker = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(evil.path))
        defer { attacker.stop() }
        try await tab.navigate(attacker.url("/evil.html").absoluteString)
        try await tab.clickAndWait("#go")
        #expect(try await tab.text().contains("403: the request came from another origin"))
        #expect(try rig.restriction()?.paused == true)
        let crossSite = try rig.trail().last
        #expect(
            crossSite?.act == "lift" && crossSite?.operatorName == "alice" && crossSite?.result == "refused: the request came from another origin")

        // Lift: the device takes the release.
        try await tab.navigate(rig.base + "/channel/stable")
        try await tab.clickAndWait("button[data-act=lift][data-channel=stable][data-version=\"1.1.0\"]")
        #expect(try await tab.url() == rig.base + "/channel/stable?done=lift")
        #expect(try rig.restriction() == nil)
        let taken = try await rig.d.updater().install()
        #expect(taken.result == .installed && taken.version == "1.1.0", "\(taken)")

        // A viewer (a browser context of its own) sees no act; a POST forged in its page with
        // its own session's CSRF token is refused.
        let viewer = try await browser.newTab()
        try await viewer.navigate(rig.base + "/login")
        try await viewer.type("#name", "victor")
        try await viewer.type("#password", ConsoleRig.viewerPassword)
        try await viewer.clickAndWait("button[data-act=login]")
        try await viewer.navigate(rig.base + "/channel/stable")
        #expect(try await viewer.text().contains("1.1.0"))
        #expect(try await viewer.evaluate("document.querySelectorAll('[data-act]:not([data-act=logout])').length") as? Int == 0)
        #expect(try await viewer.evaluate("document.querySelectorAll('form[action^=\"/act/\"]').length") as? Int == 0)
        let forged = """
            (() => { const f = document.createElement('form'); f.method = 'post'; f.action = '/act/halt';
              for (const [k, v] of [['csrf', document.querySelector('input[name=csrf]').value], ['channel', 'stable'],
                ['version', '1.1.0'], ['basis', 'none']]) {
                const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i); }
              const b = document.createElement('button'); b.id = 'forged'; b.type = 'submit'; b.textContent = 'halt';
              f.appendChild(b); document.body.appendChild(f); return true; })()
            """
        #expect(try await viewer.evaluate(forged) as? Bool == true)
        try await viewer.clickAndWait("#forged")
        let refusal = try await viewer.text()
        #expect(refusal.contains("403: victor is a viewer"), "\(refusal)")
        #expect(try rig.restriction() == nil)

        let acts = try rig.trail().filter { $0.act != "login" }
        #expect(acts.map(\.act) == ["admit", "halt", "lift", "lift", "halt"])
        #expect(acts.map(\.result.first) == ["o", "o", "r", "o", "r"])
        await rig.stop()
    }
}
