"""Op families. Importing this package registers every op definition, kernel and gradient."""
