"""Libraries below the op layer that several parts share (file formats such as TFRecord)."""
