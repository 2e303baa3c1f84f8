package daemon

// defaultParts are the real ingester and scheduler.
func defaultParts() parts {
	return parts{}
}
