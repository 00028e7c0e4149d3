import ClientUpdater

/// The Meteor channel's part of a device root: `meteor/`.
extension RootLayout {
    /// `meteor/`: the Meteor channel's store.
    package var meteor: String { store("meteor") }
    /// `meteor/<version>`; `nil` when the version string is not a safe folder name.
    package func meteorDirectory(_ version: String) -> String? {
        guard RootLayout.isSafeComponent(version) else { return nil }
        return meteor + "/" + version
    }
}
