import FleetReports
import StrictJSON

/// The devices waiting for admission, with their labels, and (for an operator) an admit
/// and a reject button each.
enum DevicesSection {
    static func render(_ list: DeviceList, user: SignedIn, app: String? = nil, channel: String? = nil) -> String {
        let devices = list.devices.filter { (app == nil || $0.app == app) && (channel == nil || $0.channel == channel) }
        var out = "<section><h2>Devices pending admission</h2>"
        guard !devices.isEmpty else { return out + "<p class=\"empty\" id=\"no-pending\">No device is waiting.</p></section>\n" }
        out += "<table id=\"pending\"><thead><tr><th>Device</th><th>App · channel</th><th>Labels</th><th>First seen</th><th>Last seen</th>"
        out += "<th class=\"num\">Held reports</th>\(user.mayAct ? "<th></th>" : "")</tr></thead><tbody>"
        for device in devices {
            let id = Markup.escape(device.device.text)
            let labels = (device.labels ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            out += "<tr data-device=\"\(id)\"><td class=\"mono\">\(id)</td>"
            out += "<td>\(Markup.escape(device.app)) · \(Markup.escape(device.channel))</td>"
            out += "<td data-field=\"labels\">\(Markup.escape(labels))</td>"
            out += "<td>\(Markup.escape(RFC3339.format(device.firstSeen)))</td><td>\(Markup.escape(RFC3339.format(device.lastSeen)))</td>"
            out += "<td class=\"num\">\(device.held)</td>"
            if user.mayAct {
                let fields = [("device", device.device.text)]
                let data = [("device", device.device.text)]
                out += "<td>" + Markup.actForm("admit", user: user, fields: fields, data: data, label: "Admit")
                out += Markup.actForm("reject", user: user, fields: fields, data: data, label: "Reject") + "</td>"
            }
            out += "</tr>"
        }
        return out + "</tbody></table></section>\n"
    }
}
