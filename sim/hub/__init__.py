"""The Hugging Face Hub emulator: fixture repos served over HTTP the way the real Hub serves them."""
