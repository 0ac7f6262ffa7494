// face (generated)
export * from './SnsAlertPublisher.js';
