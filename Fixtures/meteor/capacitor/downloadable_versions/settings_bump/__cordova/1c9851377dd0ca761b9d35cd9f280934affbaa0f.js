/* packages/meteor.js */
var Meteor = { isCordova: true }; var Template = { body: { addContent: function (f) { Template.body.content = f; } } };
/* app/template.mobileapp.js */
Template.body.addContent(function () { return 'generation 1'; });
/* app/mobileapp.js */
document.addEventListener('DOMContentLoaded', function () {
  if (window.WebAppLocalServer) WebAppLocalServer.startupDidComplete(function () {
    document.getElementById('started').textContent = 'yes';
  });
});
