// Package watch reports which paths under the exchange directory may have changed, from fsnotify events and from a polling loop that alone is enough.
package watch
