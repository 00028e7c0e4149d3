// Tests for this module land here.
