// Placeholder until the command tree lands.
print("clientctl")
