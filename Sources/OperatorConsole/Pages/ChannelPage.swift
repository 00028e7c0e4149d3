import FleetReports
import Foundation
import StrictJSON

/// `/channel/NAME`: the channel's release and what holds it back, the acts on it (for an
/// operator), the fleet's figures, what breaks per version, and the devices waiting.
enum ChannelPage {
    /// What the page shows, each part read on its own: one that failed says why in its place.
    struct Parts {
        var state: ChannelState
        var fleet: Result<FleetSummary, OperatorConsoleError>
        var problems: Result<ProblemSummary?, OperatorConsoleError>
        var pending: Result<DeviceList, OperatorConsoleError>
    }

    static func render(_ parts: Parts, user: SignedIn, notice: String? = nil, problem: String? = nil) -> String {
        let state = parts.state
        var body = release(state, user: user)
        switch parts.fleet {
        case .success(let summary): body += "<section id=\"fleet\"><h2>Fleet</h2>\(FleetSection.render(summary))</section>\n"
        case .failure(let error): body += unavailable("Fleet", error)
        }
        switch parts.problems {
        case .success(let summary?): body += problems(summary)
        case .success(nil): body += "<section id=\"problems\"><h2>What breaks</h2><p class=\"empty\">The collector lists no problems.</p></section>\n"
        case .failure(let error): body += unavailable("What breaks", error)
        }
        switch parts.pending {
        case .success(let list): body += DevicesSection.render(list, user: user, app: state.app, channel: state.channel)
        case .failure(let error): body += unavailable("Devices pending admission", error)
        }
        return Markup.page(title: "\(state.app) · \(state.channel)", user: user, notice: notice, problem: problem, body: body)
    }

    private static func unavailable(_ title: String, _ error: OperatorConsoleError) -> String {
        "<section><h2>\(Markup.escape(title))</h2><p class=\"problem\">\(Markup.escape(error.message))</p></section>\n"
    }

    private static func release(_ state: ChannelState, user: SignedIn) -> String {
        let version = state.version.description
        var out = "<section id=\"release\" data-channel=\"\(Markup.escape(state.channel))\" data-version=\"\(Markup.escape(version))\">"
        out += "<h2>Release</h2><p class=\"state\">Release <strong data-field=\"version\">\(Markup.escape(version))</strong>, "
        out += "published \(Markup.escape(RFC3339.format(state.manifest.published))): "
        out += "<span data-field=\"state\"\(state.halted ? " class=\"halted\"" : "")>\(Markup.escape(state.summary))</span></p>"
        if let note = state.restrictionNote {
            out += "<p class=\"empty\" data-field=\"restriction-note\">restriction.json: \(Markup.escape(note))</p>"
        }
        if !state.hasRolloutRole {
            out += "<p class=\"problem\">The channel's trust root has no rollout role: devices ignore restrictions, "
            out += "so halt, lift and cap are not offered.</p>"
        } else if user.mayAct {
            let fields = [("channel", state.channel), ("version", version), ("basis", basis(state))]
            let data = [("channel", state.channel), ("version", version)]
            out += "<div class=\"acts\">"
            if state.halted {
                out += Markup.actForm("lift", user: user, fields: fields, data: data, label: "Lift the halt of \(version)")
            } else {
                out += Markup.actForm("halt", user: user, fields: fields, data: data, label: "Halt \(version)")
            }
            let current = ChannelState.percent(state.effectivePercent)
            if state.effectivePercent > 0 {
                let input = "<label>to <input type=\"number\" name=\"percent\" min=\"0\" max=\"\(current)\" step=\"any\" required> %</label>"
                out += Markup.actForm(
                    "cap", user: user, fields: fields, data: data, label: "Cap the rollout (now \(current) %)", extra: input)
            }
            out += "</div>"
        }
        return out + "</section>\n"
    }

    /// The basis of an act as a form field: `none` or the SHA-256 of `restriction.json`.
    static func basis(_ state: ChannelState) -> String {
        switch state.basis {
        case .none: return "none"
        case .sha256(let hex): return hex
        }
    }

    private static func problems(_ summary: ProblemSummary) -> String {
        var out = "<section id=\"problems\"><h2>What breaks</h2>"
        guard !summary.versions.isEmpty else { return out + "<p class=\"empty\">No problems reported in the window.</p></section>\n" }
        out += "<table><thead><tr><th>Version</th><th>Kind</th><th>Reason</th><th class=\"num\">Count</th><th class=\"num\">Devices</th>"
        out += "<th>Kept messages</th></tr></thead><tbody>"
        for version in summary.versions {
            let v = Markup.escape(version.version)
            for problem in version.problems {
                out += "<tr data-version=\"\(v)\"><td>\(v)</td><td data-field=\"kind\">\(Markup.escape(problem.kind))</td>"
                out += "<td>\(Markup.escape(problem.reason ?? "–"))</td><td class=\"num\">\(problem.count)</td>"
                out += "<td class=\"num\">\(problem.devices)</td><td>"
                for kept in problem.messages ?? [] {
                    out += "<div class=\"message\" data-field=\"message\">\(Markup.escape(kept.message)) <span>×\(kept.count)</span></div>"
                }
                out += "</td></tr>"
            }
        }
        return out + "</tbody></table></section>\n"
    }
}
