import FleetPage
import FleetReports

/// The fleet figures of one app and channel as the fleet page draws them (``FleetPage``'s
/// `FleetHTML`), without its document frame; its style is served in `/console.css` (the
/// console's policy allows no inline style).
enum FleetSection {
    static func render(_ summary: FleetSummary) -> String { "<div class=\"fleet\">" + FleetHTML.sections(summary) + "</div>" }

    /// The fleet page's CSS.
    static var style: String { FleetHTML.style }
}
