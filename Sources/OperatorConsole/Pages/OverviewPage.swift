/// `/`: every channel of RELEASES with its release and what holds it back.
enum OverviewPage {
    static func render(channels: [Result<ChannelState, OperatorConsoleError>], names: [String], user: SignedIn, problem: String? = nil) -> String {
        var body = ""
        if names.isEmpty { body += "<p class=\"empty\">No channel in RELEASES holds a manifest.json yet.</p>" }
        body += "<table id=\"channels\"><thead><tr><th>Channel</th><th>App</th><th>Release</th><th>State</th></tr></thead><tbody>"
        for (name, result) in zip(names, channels) {
            let link = "<a href=\"/channel/\(Markup.escape(name))\">\(Markup.escape(name))</a>"
            switch result {
            case .success(let state):
                body += "<tr data-channel=\"\(Markup.escape(name))\"><td>\(link)</td><td>\(Markup.escape(state.app))</td>"
                body += "<td data-field=\"version\">\(Markup.escape(state.version.description))</td>"
                body += "<td data-field=\"state\"\(state.halted ? " class=\"halted\"" : "")>\(Markup.escape(state.summary))</td></tr>"
            case .failure(let error):
                body += "<tr data-channel=\"\(Markup.escape(name))\"><td>\(link)</td><td colspan=\"3\" class=\"problem\">"
                body += "\(Markup.escape(error.message))</td></tr>"
            }
        }
        body += "</tbody></table>\n"
        return Markup.page(title: "Channels", user: user, problem: problem, body: body)
    }
}
